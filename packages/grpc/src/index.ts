// @idemq/grpc: idempotent unary RPCs for grpc-js servers and clients.
export {
  IDEMPOTENCY_CLIENT_DEFAULTS,
  type IdempotencyClientOptions,
  idempotencyClientInterceptor,
} from './client/index.js';
export { idempotencyContext } from './context.js';
export { idempotencyInterceptor } from './idempotencyInterceptor.js';
export { GRPC_IDEMPOTENCY_DEFAULTS } from './options.js';
export { REPLAYED_METADATA, RETRY_AFTER_METADATA } from './refusals.js';
export { STORED_STATUS_CODES } from './statusPolicy.js';
export type {
  GrpcIdempotencyContext,
  GrpcIdempotencyOptions,
  GuardableMethod,
  GuardedCall,
  GuardedMethods,
} from './types.js';
