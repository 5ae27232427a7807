import { ResultNotSerializableError } from '../errors/store.js';
import type { ResultSerializer } from './types.js';

/**
 * JSON without a reviver: a stored `{"__proto__": …}` comes back as a plain own property and
 * never touches a prototype.
 */
export const jsonSerializer: ResultSerializer = Object.freeze({
  serialize(result: unknown): string {
    // JSON.stringify silently drops functions and symbols; refuse them instead of storing less.
    const refuseNonData = (_key: string, value: unknown) => {
      if (typeof value === 'function' || typeof value === 'symbol') {
        throw new ResultNotSerializableError(`a ${typeof value} is not data`);
      }
      return value;
    };
    try {
      return JSON.stringify(result === undefined ? null : result, refuseNonData);
    } catch (error) {
      if (error instanceof ResultNotSerializableError) throw error;
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
