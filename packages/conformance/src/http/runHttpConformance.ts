import { describe } from 'vitest';
import { CaseList, type CollectedCase } from '../collectedCases.js';
import { type CaseRegistrar, Suite } from '../suite.js';
import { vitestRegistrar } from '../vitestRegistrar.js';
import { registerBodyCases } from './bodies.js';
import { registerCrashCases } from './crash.js';
import { registerFailureCases } from './failures.js';
import { HTTP_TIMING_DEFAULTS, type HttpHarness, type ResolvedHttpTiming } from './harness.js';
import { HttpEnv } from './httpEnv.js';
import { registerInProgressCases } from './inProgress.js';
import { registerIsolationCases } from './isolation.js';
import { registerKeyCases } from './keys.js';
import { registerReplayCases } from './replay.js';

/**
 * Registers the HTTP conformance cases (H01–H14, listed in this package's README) for one HTTP
 * binding of idemq as a vitest `describe` block. Call it at the top level of a test file.
 *
 * The harness mounts the suite's fetch-style route behind the binding's middleware; every case
 * starts its own servers on its own store and scope, and closes them when it ends.
 *
 * @example
 * runHttpConformance({
 *   name: 'fetch centre',
 *   start: async ({ options, route }) => {
 *     const idempotency = createHttpIdempotency(options);
 *     return serveFetch((request) => idempotency.handle(request, route));
 *   },
 * });
 */
export function runHttpConformance(harness: HttpHarness): void {
  const title = `http conformance: ${harness.name}`;
  describe(title, () => {
    registerHttpCases(harness, vitestRegistrar).report(title);
  });
}

/**
 * The HTTP cases for `harness`, as a list to run with `runCollectedCases` instead of as vitest
 * tests: how the negative controls prove that broken bindings fail them.
 */
export function collectHttpCases(harness: HttpHarness): CollectedCase[] {
  const list = new CaseList();
  registerHttpCases(harness, list);
  return list.cases;
}

function registerHttpCases(harness: HttpHarness, registrar: CaseRegistrar) {
  const timing: ResolvedHttpTiming = { ...HTTP_TIMING_DEFAULTS, ...definedOnly(harness.timing) };
  const createEnv = () => new HttpEnv(harness, timing);
  const suite = new Suite(harness, createEnv, timing.caseTimeoutMs, registrar, harness.cases);
  registerReplayCases(suite);
  registerInProgressCases(suite);
  registerKeyCases(suite);
  registerCrashCases(suite);
  registerFailureCases(suite);
  registerIsolationCases(suite);
  registerBodyCases(suite);
  return suite;
}

function definedOnly(timing: HttpHarness['timing']): Partial<ResolvedHttpTiming> {
  return Object.fromEntries(
    Object.entries(timing ?? {}).filter(([, value]) => value !== undefined),
  ) as Partial<ResolvedHttpTiming>;
}
