import { ErrorCodes } from './codes.js';
import { IdemqError, isIdemqError } from './idemqError.js';

/**
 * What kept the store from serving an operation that may succeed later: no connection
 * (`unreachable`), no answer in time (`timeout`), a server that said it cannot serve now
 * (`busy`: loading its data, running a long script, a failover or resharding under way, too few
 * replicas), a server out of memory that refuses writes until memory frees (`out-of-memory`:
 * Redis `maxmemory` with the `noeviction` policy), or a failure the store does not recognise
 * (`other`).
 */
export type StoreUnavailableReason = 'unreachable' | 'timeout' | 'busy' | 'out-of-memory' | 'other';

/**
 * The store could not be reached or could not serve the operation now; the operation may be
 * retried. `reason` says what kept it, for alerts that tell an outage from a full server.
 */
export class StoreUnavailableError extends IdemqError {
  readonly reason: StoreUnavailableReason;
  constructor(message: string, options: { cause?: unknown; reason?: StoreUnavailableReason } = {}) {
    super(ErrorCodes.STORE_UNAVAILABLE, message, { retriable: true, cause: options.cause });
    this.reason = options.reason ?? 'other';
  }
}

/**
 * What a `StoreRejectedError` holds for: one `record` (it is not what the store can work with:
 * a foreign value under its key, fields the store cannot read), or the whole `store` (its
 * configuration: a permission the store's user lacks, a command or script the server refuses).
 */
export type StoreRejection = 'record' | 'store';

/**
 * The store answered, and refused the operation in a way that repeating it will not change:
 * not retriable. `affects` says whether only this record is concerned (the consumer
 * dead-letters its message) or every operation (a configuration to fix: the consumer keeps
 * retrying, as for an outage, so fixing it needs no replay).
 */
export class StoreRejectedError extends IdemqError {
  readonly affects: StoreRejection;
  constructor(message: string, options: { affects: StoreRejection; cause?: unknown }) {
    super(ErrorCodes.STORE_REJECTED, message, { retriable: false, cause: options.cause });
    this.affects = options.affects;
  }
}

/** True when `error` is a store's refusal of one record (also across copies of the package). */
export function refusesRecord(error: unknown): boolean {
  return (
    isIdemqError(error) &&
    error.code === ErrorCodes.STORE_REJECTED &&
    (error as { affects?: unknown }).affects === 'record'
  );
}

/** The store was closed; nothing more can be read or written through it. */
export class StoreClosedError extends IdemqError {
  constructor() {
    super(ErrorCodes.STORE_CLOSED, 'The store is closed');
  }
}

/** A result to store is over the store's size limit; nothing was written. */
export class ResultTooLargeError extends IdemqError {
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(bytes: number, maxBytes: number) {
    super(
      ErrorCodes.RESULT_TOO_LARGE,
      `Result is ${bytes} bytes, over the ${maxBytes}-byte limit for stored results`,
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** A result that cannot be stored faithfully (BigInt, a cycle, a function…). */
export class ResultNotSerializableError extends IdemqError {
  constructor(detail: string, cause?: unknown) {
    super(ErrorCodes.RESULT_NOT_SERIALIZABLE, `Result cannot be stored: ${detail}`, { cause });
  }
}
