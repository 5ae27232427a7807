import { ErrorCodes } from './codes.js';
import { IdemqError } from './IdemqError.js';

/** Options were invalid; `problems` lists every bad field, not just the first. */
export class InvalidOptionsError extends IdemqError {
  readonly problems: readonly string[];
  constructor(component: string, problems: readonly string[]) {
    super(
      ErrorCodes.OPTIONS_INVALID,
      `Invalid ${component} options:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.problems = problems;
  }
}

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

/** The store could not be reached or answered with an error; the operation may be retried. */
export class StoreUnavailableError extends IdemqError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCodes.STORE_UNAVAILABLE, message, { retriable: true, cause: options.cause });
  }
}

/**
 * A transport could not give what was asked of it: the broker unreachable, or not answering, in
 * time (retriable), or a queue, topic or permission it lacks (retriable or not, as the adapter
 * says). One class for every adapter, so a caller checks for it once.
 */
export class TransportUnavailableError extends IdemqError {
  constructor(message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(ErrorCodes.TRANSPORT_UNAVAILABLE, message, {
      retriable: options.retriable ?? true,
      cause: options.cause,
    });
  }
}

/** The record is owned by another claim: this owner's lease was taken over or released. */
export class LeaseLostError extends IdemqError {
  readonly requestId: string;
  constructor(requestId: string, message = `Lease on request ${requestId} was lost`) {
    super(ErrorCodes.LEASE_LOST, message, { retriable: true });
    this.requestId = requestId;
  }
}

/** The same requestId arrived with a different payload than the one first claimed. */
export class KeyReuseError extends IdemqError {
  readonly requestId: string;
  constructor(requestId: string) {
    super(
      ErrorCodes.KEY_REUSE,
      `Request ${requestId} was already seen with a different payload (key reuse)`,
    );
    this.requestId = requestId;
  }
}

/**
 * A payload given to `run()` that `fingerprint` cannot encode canonically (a BigInt, a function,
 * a cycle, a `Date` or other non-plain object, a number that is not finite). `path` says where,
 * as in `payload.items[2].price`. Nothing was claimed or run.
 */
export class PayloadNotFingerprintableError extends IdemqError {
  readonly path: string;
  constructor(path: string, what: string) {
    super(
      ErrorCodes.PAYLOAD_NOT_FINGERPRINTABLE,
      `Cannot fingerprint the payload: ${path} is ${what}. Pass plain objects, arrays, strings, ` +
        'finite numbers, booleans and null (JSON values), or the payload as a string or bytes',
      { retriable: false },
    );
    this.path = path;
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

/** The message failed `maxAttempts` times and is dead-lettered. */
export class MaxAttemptsError extends IdemqError {
  readonly attempts: number;
  constructor(attempts: number, cause?: unknown) {
    super(ErrorCodes.MAX_ATTEMPTS, `Gave up after ${attempts} attempt(s)`, { cause });
    this.attempts = attempts;
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

/** The store was closed; nothing more can be read or written through it. */
export class StoreClosedError extends IdemqError {
  constructor() {
    super(ErrorCodes.STORE_CLOSED, 'The store is closed');
  }
}
