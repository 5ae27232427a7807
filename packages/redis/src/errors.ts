import { IdemqError, StoreUnavailableError } from '@idemq/core';
import { classifyRedisError } from './errorClassifier.js';

/**
 * Bounds a store call: rejects with a retriable error when `promise` takes longer than
 * `timeoutMs`, and only ever with typed errors: an `IdemqError` as it is, anything else (the
 * client's own errors, Redis's error replies) as `classifyRedisError` types it.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  operation: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StoreUnavailableError(`Redis ${operation} timed out after ${timeoutMs} ms`, {
            reason: 'timeout',
          }),
        ),
      timeoutMs,
    );
  });
  const typed = promise.catch((error: unknown) => {
    throw error instanceof IdemqError ? error : classifyRedisError(operation, error);
  });
  return Promise.race([typed, timeout]).finally(() => clearTimeout(timer));
}
