// The client side of @idemq/grpc: one idempotency key per logical unary call, whatever it retries.
export { idempotencyClientInterceptor } from './idempotencyClientInterceptor.js';
export { IDEMPOTENCY_CLIENT_DEFAULTS, type IdempotencyClientOptions } from './options.js';
