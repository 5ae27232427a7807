import { Metadata, type StatusObject, status } from '@grpc/grpc-js';
import type { Refusal, RefusalKind } from '@idemq/core/adapter';
import { encodeRetryStatus, STATUS_DETAILS_KEY } from './statusDetails.js';

/** The metadata entry marking every replayed answer. */
export const REPLAYED_METADATA = 'idempotent-replayed';
/** The metadata entry saying a replay's response message was not stored, and why. */
export const BODY_OMITTED_METADATA = 'idempotent-body-omitted';
/** The retry delay in ms, for clients that read no `google.rpc.RetryInfo`. */
export const RETRY_AFTER_METADATA = 'retry-after-ms';
/** The trailer grpc-js's retry policy reads for the exact delay of its next attempt. */
const PUSHBACK_METADATA = 'grpc-retry-pushback-ms';

/**
 * The status of each refusal. Key reuse is FAILED_PRECONDITION, not INVALID_ARGUMENT: the
 * request is only wrong because of a record the system holds (gRPC's guide keeps
 * INVALID_ARGUMENT for arguments wrong whatever the state), and no retry of it can succeed.
 */
export const REFUSAL_CODES: Readonly<Record<RefusalKind, status>> = Object.freeze({
  'key-missing': status.INVALID_ARGUMENT,
  'key-malformed': status.INVALID_ARGUMENT,
  'key-reuse': status.FAILED_PRECONDITION,
  'in-progress': status.ABORTED,
  'store-unavailable': status.UNAVAILABLE,
  'store-rejected': status.INTERNAL,
  'handler-failed': status.INTERNAL,
});

/**
 * A refusal as a status sent Trailers-Only (grpc-js retries only those). With a retry delay, it
 * carries `google.rpc.RetryInfo`, `retry-after-ms` and grpc-js's pushback trailer.
 */
export function refusalStatus(refusal: Refusal): StatusObject {
  const code = REFUSAL_CODES[refusal.kind];
  const metadata = new Metadata();
  if (refusal.retryAfterMs !== undefined) {
    const delayMs = Math.max(1, Math.ceil(refusal.retryAfterMs));
    metadata.set(STATUS_DETAILS_KEY, encodeRetryStatus(code, refusal.detail, delayMs));
    metadata.set(RETRY_AFTER_METADATA, String(delayMs));
    metadata.set(PUSHBACK_METADATA, String(delayMs));
  }
  return { code, details: refusal.detail, metadata };
}
