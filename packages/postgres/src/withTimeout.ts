import { StoreUnavailableError } from '@idemq/core';

/**
 * `operation`, or a retriable timeout after `timeoutMs`: a pool with no free connection waits
 * without limit, and the contract says a store never hangs.
 */
export function withTimeout<T>(operation: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StoreUnavailableError(`${what} did not answer within ${timeoutMs} ms`, {
            reason: 'timeout',
          }),
        ),
      timeoutMs,
    );
  });
  // The loser of the race must not become an unhandled rejection.
  operation.catch(() => undefined);
  return Promise.race([operation, timeout]).finally(() => clearTimeout(timer));
}
