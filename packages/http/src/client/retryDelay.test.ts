import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './retryDelay.js';

const policy = { baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
const lowest = () => 0;
const highest = () => 0.999_999;

describe('retryDelayMs', () => {
  it('stays within [0, base × 2^(attempt−1)] with full jitter', () => {
    for (const [attempt, bound] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
    ] as const) {
      expect(retryDelayMs(attempt, undefined, policy, lowest)).toBe(0);
      const high = retryDelayMs(attempt, undefined, policy, highest);
      expect(high).toBeLessThan(bound);
      expect(high).toBeGreaterThanOrEqual(bound - 1);
    }
  });

  it('never goes over maxDelayMs, however many attempts failed', () => {
    for (let attempt = 1; attempt <= 80; attempt += 1) {
      const delay = retryDelayMs(attempt, undefined, policy, highest);
      expect(delay).toBeLessThanOrEqual(policy.maxDelayMs);
      expect(Number.isFinite(delay)).toBe(true);
    }
  });

  it('waits at least what Retry-After asks', () => {
    expect(retryDelayMs(1, 3000, policy, lowest)).toBe(3000);
    expect(retryDelayMs(1, 3000, policy, highest)).toBe(3000);
    expect(retryDelayMs(1, 0, policy, lowest)).toBe(0);
  });

  it('keeps the backoff when it is longer than Retry-After', () => {
    expect(retryDelayMs(5, 10, policy, highest)).toBeGreaterThan(900);
  });

  it('caps Retry-After at maxRetryAfterMs', () => {
    expect(retryDelayMs(1, 3_600_000, policy, lowest)).toBe(policy.maxRetryAfterMs);
  });
});
