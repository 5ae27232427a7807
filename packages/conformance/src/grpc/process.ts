// Entry point `@idemq/conformance/grpc-process`: what a harness's child process imports. It must
// not load vitest, which only runs inside a test worker.
export type { GrpcProcessSetup, ProcessImplementationSetup } from './harness.js';
export { PAYMENTS_PROTO, paymentsService } from './paymentsService.js';
export { processImplementation } from './processImplementation.js';
