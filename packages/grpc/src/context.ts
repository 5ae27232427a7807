import type { Metadata } from '@grpc/grpc-js';
import type { GrpcIdempotencyContext } from './types.js';

/** A guarded call's context, found by its request metadata: the object the handler's call holds. */
const contexts = new WeakMap<Metadata, GrpcIdempotencyContext>();

export function attachContext(metadata: Metadata, context: GrpcIdempotencyContext): void {
  contexts.set(metadata, context);
}

/**
 * The idempotency record of the call a handler serves (key, fencing token, attempt, lease-loss
 * signal); `undefined` when the call was not guarded (method not covered, no key and not required).
 *
 * @example
 * async createPayment(call, callback) {
 *   const ctx = idempotencyContext(call);
 *   await ledger.insert(call.request, { fencingToken: ctx?.fencingToken, signal: ctx?.signal });
 * }
 */
export function idempotencyContext(call: {
  metadata: Metadata;
}): GrpcIdempotencyContext | undefined {
  return contexts.get(call.metadata);
}
