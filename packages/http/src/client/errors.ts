import { ErrorCodes, IdemqError } from '@idemq/core';

/** Why `idempotentFetch` stopped trying. */
export type RetriesExhaustedReason =
  /** `maxAttempts` attempts were made. */
  | 'attempts'
  /** The overall `deadlineMs` was reached. */
  | 'deadline';

/**
 * The last attempt of an `idempotentFetch` call failed without a response (a network error, an
 * attempt timeout, the deadline reached mid-attempt). Sending the request again with the same
 * `Idempotency-Key` header is safe: the server runs it at most once.
 */
export class HttpRetriesExhaustedError extends IdemqError {
  readonly reason: RetriesExhaustedReason;
  /** Attempts made, the failed last one included. */
  readonly attempts: number;
  /** The key every attempt carried, to send the request again with. */
  readonly idempotencyKey: string;

  constructor(details: {
    reason: RetriesExhaustedReason;
    attempts: number;
    idempotencyKey: string;
    method: string;
    url: string;
    cause: unknown;
  }) {
    const why = details.reason === 'deadline' ? 'the deadline was reached' : 'no attempts are left';
    super(
      ErrorCodes.HTTP_RETRIES_EXHAUSTED,
      `${details.method} ${details.url} failed after ${details.attempts} attempt(s) and ${why}: ${describe(details.cause)}`,
      { retriable: true, cause: details.cause },
    );
    this.reason = details.reason;
    this.attempts = details.attempts;
    this.idempotencyKey = details.idempotencyKey;
  }
}

/** A request body over `maxBodyBytes`: it cannot be buffered for replay, so nothing was sent. */
export class RequestBodyTooLargeError extends IdemqError {
  /** Bytes read when the limit was passed (a lower bound of the body's size). */
  readonly bytes: number;
  readonly maxBytes: number;

  constructor(bytes: number, maxBytes: number) {
    super(
      ErrorCodes.HTTP_BODY_TOO_LARGE,
      `The request body is over maxBodyBytes (${maxBytes}): it must be buffered to be sent again on a retry, so nothing was sent`,
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return `${cause.message}${inner}`;
}
