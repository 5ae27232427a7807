import { backoffDelayMs } from '@idemq/core';

export interface RetryDelayPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

/**
 * How long to wait before the attempt after `failedAttempt` (1-based): exponential backoff with
 * full jitter, and never sooner than the server's `Retry-After` (itself capped at
 * `maxRetryAfterMs`, so a server cannot park a client for hours).
 */
export function retryDelayMs(
  failedAttempt: number,
  retryAfterMs: number | undefined,
  policy: RetryDelayPolicy,
  random: () => number = Math.random,
): number {
  const backoff = backoffDelayMs(
    failedAttempt,
    { ...policy, maxAttempts: Number.POSITIVE_INFINITY, jitter: 'full' },
    random,
  );
  if (retryAfterMs === undefined) return backoff;
  return Math.max(backoff, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}
