import { status } from '@grpc/grpc-js';

/**
 * The error codes stored and replayed by default: answers about the request itself, which a
 * retry of the same request would get again. The others (UNAVAILABLE, INTERNAL, ABORTED,
 * DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNKNOWN, CANCELLED, DATA_LOSS, PERMISSION_DENIED,
 * UNAUTHENTICATED) leave the record FAILED: the condition may pass, and a retry runs again.
 */
export const STORED_STATUS_CODES: readonly number[] = Object.freeze([
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.ALREADY_EXISTS,
  status.FAILED_PRECONDITION,
  status.OUT_OF_RANGE,
  status.UNIMPLEMENTED,
]);

const stored = new Set<number>([status.OK, ...STORED_STATUS_CODES]);

/** The default `storeStatus`: OK and `STORED_STATUS_CODES`. */
export function storedByDefault(code: number): boolean {
  return stored.has(code);
}
