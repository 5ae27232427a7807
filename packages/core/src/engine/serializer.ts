import { ErrorCodes } from '../errors/codes.js';
import { IdemqError } from '../errors/IdemqError.js';
import type { ResultSerializer } from './types.js';

/** A result that cannot be stored faithfully (BigInt, a cycle, a function…). */
export class ResultNotSerializableError extends IdemqError {
  constructor(detail: string, cause?: unknown) {
    super(ErrorCodes.RESULT_NOT_SERIALIZABLE, `Result cannot be stored: ${detail}`, { cause });
  }
}

/**
 * JSON without a reviver: a stored `{"__proto__": …}` comes back as a plain own property and
 * never touches a prototype.
 */
export const jsonSerializer: ResultSerializer = Object.freeze({
  serialize(result: unknown): string {
    if (typeof result === 'function' || typeof result === 'symbol') {
      throw new ResultNotSerializableError(`a ${typeof result} is not data`);
    }
    try {
      return JSON.stringify(result === undefined ? null : result);
    } catch (error) {
      throw new ResultNotSerializableError(
        error instanceof Error ? error.message : 'JSON.stringify failed',
        error,
      );
    }
  },
  deserialize(text: string): unknown {
    return JSON.parse(text);
  },
});
