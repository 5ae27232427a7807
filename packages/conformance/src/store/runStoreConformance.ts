import { describe } from 'vitest';
import { CaseList, type CollectedCase } from '../collectedCases.js';
import { resolveStoreTiming, type StoreHarness } from '../harness.js';
import { type CaseRegistrar, Suite } from '../suite.js';
import { vitestRegistrar } from '../vitestRegistrar.js';
import { registerBatchCases } from './batch.js';
import { registerBatchCompletionCases } from './batchCompletions.js';
import { registerClaimCases } from './claim.js';
import { registerClosedCases } from './closed.js';
import { registerExpiryCases } from './expiry.js';
import { registerFingerprintCases } from './fingerprints.js';
import { registerLapsedLeaseCases } from './lapsedLease.js';
import { registerLeaseCases } from './lease.js';
import { registerOutageCases } from './outage.js';
import { registerRecordCases } from './records.js';
import { registerResultOmittedCases } from './resultOmitted.js';
import { registerSharedBackendCases } from './sharedBackend.js';
import { StoreEnv } from './storeEnv.js';

/**
 * Registers the store conformance cases (S01–S23, listed in this package's README) for one
 * `Store` implementation as a vitest `describe` block. Call it at the top level of a test file.
 *
 * Every case uses its own scope and closes the stores it opened, also when it fails. Cases that
 * test expiry wait real time (`timing.shortMs`, 150 ms by default), so they hold for stores whose
 * clock is a server's.
 *
 * @example
 * // packages/redis/test/conformance.int.test.ts
 * import { runStoreConformance } from '@idemq/conformance';
 * import { redisStore } from '@idemq/redis';
 *
 * runStoreConformance({
 *   name: 'redis',
 *   createStore: async () => redisStore({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }),
 *   createUnreachableStore: async () => redisStore({ url: 'redis://127.0.0.1:1', timeoutMs: 500 }),
 * });
 */
export function runStoreConformance(harness: StoreHarness): void {
  const title = `store conformance: ${harness.name}`;
  describe(title, () => {
    registerStoreCases(harness, vitestRegistrar).report(title);
  });
}

/**
 * The store cases for `harness`, as a list to run with `runCollectedCases` instead of as vitest
 * tests: how the negative controls prove that broken stores fail them.
 */
export function collectStoreCases(harness: StoreHarness): CollectedCase[] {
  const list = new CaseList();
  registerStoreCases(harness, list);
  return list.cases;
}

function registerStoreCases(harness: StoreHarness, registrar: CaseRegistrar) {
  const timing = resolveStoreTiming(harness.timing);
  const createEnv = () => new StoreEnv(harness, timing);
  const suite = new Suite(harness, createEnv, caseTimeoutMs(timing), registrar);
  registerClaimCases(suite);
  registerLeaseCases(suite);
  registerRecordCases(suite);
  registerOutageCases(suite);
  registerBatchCases(suite);
  registerBatchCompletionCases(suite);
  registerLapsedLeaseCases(suite);
  registerFingerprintCases(suite);
  registerClosedCases(suite);
  registerResultOmittedCases(suite);
  registerExpiryCases(suite);
  registerSharedBackendCases(suite);
  return suite;
}

/** Generous per-case timeout: the longest case waits a few leases plus an outage bound. */
function caseTimeoutMs(timing: ReturnType<typeof resolveStoreTiming>): number {
  return 10_000 + timing.unavailableWithinMs * 8 + timing.shortMs * 10;
}
