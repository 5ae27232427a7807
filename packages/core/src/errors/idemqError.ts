import type { ErrorCode } from './codes.js';

export interface IdemqErrorOptions {
  /** Whether trying the same operation again later may succeed. */
  retriable?: boolean;
  cause?: unknown;
}

/**
 * The one base class of every error idemq throws or records. `code` is stable public contract;
 * `retriable` tells the engine whether a redelivery may succeed.
 */
export class IdemqError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;

  constructor(code: ErrorCode, message: string, options: IdemqErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** True for any idemq error, also across duplicated copies of the package. */
export function isIdemqError(value: unknown): value is IdemqError {
  if (value instanceof IdemqError) return true;
  if (!(value instanceof Error)) return false;
  const { code, retriable } = value as Error & { code?: unknown; retriable?: unknown };
  return (
    typeof code === 'string' && code.startsWith('IDEMQ_ERR_') && typeof retriable === 'boolean'
  );
}
