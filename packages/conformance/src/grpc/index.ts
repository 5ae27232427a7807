// Entry point `@idemq/conformance/grpc`: the gRPC suite, apart so that the other suites need no
// grpc-js.
export { type CallResult, CHARGE, REPLAYED } from './grpcEnv.js';
export {
  GRPC_TIMING_DEFAULTS,
  type GrpcCallContext,
  type GrpcHarness,
  type GrpcProcess,
  type GrpcProcessSetup,
  type GrpcServer,
  type GrpcServerSetup,
  type GrpcSuiteOptions,
  type GrpcTiming,
  type ProcessImplementationSetup,
  type ResolvedGrpcTiming,
} from './harness.js';
export {
  type ChargeReply,
  type ChargeRequest,
  chargeMethod,
  PAYMENTS_PROTO,
  paymentsService,
} from './paymentsService.js';
export { processImplementation } from './processImplementation.js';
export { collectGrpcCases, runGrpcConformance } from './runGrpcConformance.js';
