import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

/**
 * Throw from a handler to dead-letter the message at once, without retries.
 *
 * @example
 * if (!account) throw new NonRetriableError('account closed');
 */
export class NonRetriableError extends IdemqError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCodes.HANDLER_NON_RETRIABLE, message, { retriable: false, cause: options.cause });
  }
}

/** A handler threw something that is not an Error; the thrown value is kept as `cause`. */
export class HandlerFailedError extends IdemqError {
  constructor(thrown: unknown) {
    super(ErrorCodes.HANDLER_FAILED, `Handler threw a non-Error value: ${describeThrown(thrown)}`, {
      retriable: true,
      cause: thrown,
    });
  }
}

/**
 * A batch handler's results were not one settled result per item, in item order: the items they
 * leave unaccounted for (every item when the array itself is wrong, else the one whose result is
 * malformed) fail with this and are dead-lettered.
 */
export class BatchResultsInvalidError extends IdemqError {
  constructor(detail: string) {
    super(ErrorCodes.BATCH_RESULTS_INVALID, `Batch handler results are invalid: ${detail}`, {
      retriable: false,
    });
  }
}

function describeThrown(thrown: unknown): string {
  if (thrown === null) return 'null';
  if (typeof thrown === 'string') return JSON.stringify(thrown.slice(0, 200));
  if (typeof thrown === 'object') {
    try {
      return JSON.stringify(thrown)?.slice(0, 200) ?? typeof thrown;
    } catch {
      return Object.prototype.toString.call(thrown);
    }
  }
  return String(thrown);
}

/** Normalises anything thrown into an Error, so a FAILED record always has a class and message. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new HandlerFailedError(thrown);
}
