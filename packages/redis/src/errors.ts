import { IdemqError, StoreUnavailableError } from '@idemq/core';

/**
 * Turns whatever the client threw into a retriable `StoreUnavailableError`. The message names
 * the failure, never the connection URL (which may hold a password).
 */
export function storeError(operation: string, thrown: unknown): StoreUnavailableError {
  if (thrown instanceof StoreUnavailableError) return thrown;
  const detail = thrown instanceof Error ? redact(thrown.message) : 'unknown error';
  return new StoreUnavailableError(`Redis ${operation} failed: ${detail}`, { cause: thrown });
}

/** Strips credentials from anything that looks like a URL. */
export function redact(text: string): string {
  return text.replace(/(\w+:\/\/)([^@/\s]*)@/g, '$1***@');
}

/**
 * Bounds a store call: rejects with a retriable error when `promise` takes longer than
 * `timeoutMs`, and only ever with typed errors: an `IdemqError` as it is, anything else (the
 * client's own errors, such as a connection lost mid-command) as a `StoreUnavailableError`.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  operation: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`Redis ${operation} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const typed = promise.catch((error: unknown) => {
    throw error instanceof IdemqError ? error : storeError(operation, error);
  });
  return Promise.race([typed, timeout]).finally(() => clearTimeout(timer));
}
