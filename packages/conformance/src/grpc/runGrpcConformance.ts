import { describe } from 'vitest';
import { CaseList, type CollectedCase } from '../collectedCases.js';
import { type CaseRegistrar, Suite } from '../suite.js';
import { vitestRegistrar } from '../vitestRegistrar.js';
import { registerCrashCases } from './crash.js';
import { registerDeadlineCases } from './deadlines.js';
import { registerFailureCases } from './failures.js';
import { GrpcEnv } from './grpcEnv.js';
import { GRPC_TIMING_DEFAULTS, type GrpcHarness, type ResolvedGrpcTiming } from './harness.js';
import { registerInProgressCases } from './inProgress.js';
import { registerKeyCases } from './keys.js';
import { registerMethodCases } from './methods.js';
import { registerReplayCases } from './replay.js';

/**
 * Registers the gRPC conformance cases (G01–G12, listed in this package's README) for one gRPC
 * binding of idemq as a vitest `describe` block. Call it at the top level of a test file.
 *
 * The harness serves the suite's Payments service (`paymentsService()`) behind the binding's
 * interceptor; every case starts its own servers on its own store and scope, and closes them
 * when it ends.
 *
 * @example
 * runGrpcConformance({
 *   name: 'grpc-js interceptor',
 *   context: (call) => idempotencyContext(call),
 *   start: ({ options, service, implementation }) =>
 *     serve(service, implementation, [idempotencyInterceptor(options)]),
 * });
 */
export function runGrpcConformance(harness: GrpcHarness): void {
  const title = `grpc conformance: ${harness.name}`;
  describe(title, () => {
    registerGrpcCases(harness, vitestRegistrar).report(title);
  });
}

/** The gRPC cases for `harness`, as a list to run with `runCollectedCases` (negative controls). */
export function collectGrpcCases(harness: GrpcHarness): CollectedCase[] {
  const list = new CaseList();
  registerGrpcCases(harness, list);
  return list.cases;
}

function registerGrpcCases(harness: GrpcHarness, registrar: CaseRegistrar) {
  const timing: ResolvedGrpcTiming = { ...GRPC_TIMING_DEFAULTS, ...definedOnly(harness.timing) };
  const createEnv = () => new GrpcEnv(harness, timing);
  const suite = new Suite(harness, createEnv, timing.caseTimeoutMs, registrar, harness.cases);
  registerReplayCases(suite);
  registerInProgressCases(suite);
  registerKeyCases(suite);
  registerFailureCases(suite);
  registerDeadlineCases(suite);
  registerMethodCases(suite);
  registerCrashCases(suite);
  return suite;
}

function definedOnly(timing: GrpcHarness['timing']): Partial<ResolvedGrpcTiming> {
  return Object.fromEntries(
    Object.entries(timing ?? {}).filter(([, value]) => value !== undefined),
  ) as Partial<ResolvedGrpcTiming>;
}
