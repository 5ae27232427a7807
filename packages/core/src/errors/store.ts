import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

/** The store could not be reached or answered with an error; the operation may be retried. */
export class StoreUnavailableError extends IdemqError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCodes.STORE_UNAVAILABLE, message, { retriable: true, cause: options.cause });
  }
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
