import { describe } from 'vitest';
import { CaseList, type CollectedCase } from '../collectedCases.js';
import {
  resolveTransportTiming,
  TRANSPORT_TIMING_DEFAULTS,
  type TransportHarness,
} from '../harness.js';
import { type CaseRegistrar, Suite } from '../suite.js';
import { vitestRegistrar } from '../vitestRegistrar.js';
import { registerAfterCloseCases } from './afterClose.js';
import { registerConcurrencyCases } from './concurrency.js';
import { registerCrashCases } from './crash.js';
import { registerDeadLetterCases } from './deadLetter.js';
import { registerDedupCases } from './dedup.js';
import { registerDeliveryCases } from './delivery.js';
import { registerLeaseCases } from './lease.js';
import { registerLifecycleCases } from './lifecycle.js';
import { registerObservabilityCases } from './observability.js';
import { registerOrderingCases } from './ordering.js';
import { registerReconnectCases } from './reconnect.js';
import { registerSettlementCases } from './settlement.js';
import { TransportEnv } from './transportEnv.js';

/**
 * Registers the transport conformance cases (C00–C35, listed in this package's README; C24 when
 * the harness can interrupt connections) for one
 * `Transport` implementation as a vitest `describe` block. Call it at the top level of a test
 * file.
 *
 * Cases adapt to `harness.capabilities` (an `approximate` attempt counter is asserted as a lower
 * bound, `nackBlocksKey` flips what C14/C16 expect…); a case that cannot apply to a capability
 * value is registered as a skipped test named with the reason, and the suite prints once which
 * ones and why. Every case uses its own
 * destination, group and scope and closes what it opened, also when it fails. Consumer-level
 * cases run `createConsumer` on `harness.createStore()` (default: `memoryStore()`).
 *
 * @example
 * // packages/rabbitmq/test/conformance.int.test.ts
 * import { runTransportConformance } from '@idemq/conformance';
 * import { rabbitmq } from '@idemq/rabbitmq';
 * import { randomUUID } from 'node:crypto';
 * // What the adapter must declare, as a literal: C00 fails when the declaration changes.
 * import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
 *
 * const url = process.env.AMQP_URL ?? 'amqp://127.0.0.1';
 * runTransportConformance({
 *   name: 'rabbitmq',
 *   capabilities: EXPECTED_CAPABILITIES.quorum,
 *   connect: async () => rabbitmq({ url }),
 *   newSource: async () => `conformance-${randomUUID()}`,
 *   deadLetterOf: (source) => `${source}.dlq`,
 *   timing: { quietMs: 300, waitMs: 10_000 },
 * });
 */
export function runTransportConformance(harness: TransportHarness): void {
  checkHarness(harness);
  const title = `transport conformance: ${harness.name}`;
  describe(title, () => {
    registerTransportCases(harness, vitestRegistrar).report(title);
  });
}

/**
 * The transport cases for `harness`, as a list to run with `runCollectedCases` instead of as
 * vitest tests: how the negative controls prove that broken transports fail them.
 */
export function collectTransportCases(harness: TransportHarness): CollectedCase[] {
  return collectTransportRegistrations(harness).cases;
}

/** Every registration for `harness`: the cases that run, and those omitted with their reason. */
export function collectTransportRegistrations(harness: TransportHarness): CaseList {
  checkHarness(harness);
  const list = new CaseList();
  registerTransportCases(harness, list);
  return list;
}

function registerTransportCases(harness: TransportHarness, registrar: CaseRegistrar) {
  const timing = resolveTransportTiming(harness.timing);
  const createEnv = () => new TransportEnv(harness, timing);
  const suite = new Suite(harness, createEnv, timing.caseTimeoutMs, registrar, harness.cases);
  registerDeliveryCases(suite);
  registerSettlementCases(suite);
  registerDeadLetterCases(suite);
  registerOrderingCases(suite);
  registerConcurrencyCases(suite);
  registerLeaseCases(suite);
  registerLifecycleCases(suite);
  registerAfterCloseCases(suite);
  registerDedupCases(suite);
  registerCrashCases(suite);
  registerObservabilityCases(suite);
  registerReconnectCases(suite);
  return suite;
}

/** A harness mistake fails loudly at collection instead of as odd case failures. */
function checkHarness(harness: TransportHarness): void {
  const problems: string[] = [];
  if (harness.capabilities.leaseExtension !== false && harness.leaseMs === undefined) {
    problems.push('capabilities.leaseExtension is set, so leaseMs (the broker lease) is required');
  }
  if (harness.leaseMs !== undefined && harness.leaseMs < 30) {
    problems.push('leaseMs below 30 ms leaves no room for a heartbeat (every lease / 3)');
  }
  const quietMs = harness.timing?.quietMs ?? TRANSPORT_TIMING_DEFAULTS.quietMs;
  if (harness.leaseMs !== undefined && quietMs >= harness.leaseMs) {
    problems.push('timing.quietMs must be shorter than leaseMs, or held deliveries lapse');
  }
  if (problems.length > 0) {
    throw new Error(`runTransportConformance(${harness.name}): ${problems.join('; ')}`);
  }
}
