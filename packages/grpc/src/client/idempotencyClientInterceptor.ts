import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { type IdempotencyClientOptions, resolveClientSettings } from './options.js';
import { RetryingUnaryCall } from './retryingUnaryCall.js';

/**
 * A grpc-js client interceptor that makes each unary call one logical request: one
 * `idempotency-key` (a UUIDv7 unless the call's metadata carries one), the same key and message on
 * every attempt, grpc-js's own retries included, and retries of ABORTED and UNAVAILABLE that wait
 * as long as the server advises (`google.rpc.RetryInfo` or `retry-after-ms`), else back off, and
 * never past the call's deadline. Streaming calls pass through untouched. Bad options throw an
 * `InvalidOptionsError` listing every problem.
 *
 * @example
 * const client = new Orders('orders:50051', credentials.createInsecure(), {
 *   interceptors: [idempotencyClientInterceptor()],
 * });
 * client.placeOrder({ sku: 'A-1' }, (error, reply) => {}); // one key, however many attempts
 */
export function idempotencyClientInterceptor(options?: IdempotencyClientOptions): Interceptor {
  const settings = resolveClientSettings(options);
  return (callOptions, nextCall) => {
    const method = callOptions.method_definition;
    if (method.requestStream || method.responseStream) {
      return new InterceptingCall(nextCall(callOptions));
    }
    return new InterceptingCall(new RetryingUnaryCall(callOptions, nextCall, settings));
  };
}
