import { describe, expect, it } from 'vitest';
import { deadlineEpochMs, MAX_TIMER_MS, retryDelayMs } from './delay.js';

const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
const lowest = () => 0;
const highest = () => 0.999_999;
const at = (failedAttempt: number, advisedMs?: number, deadlineMs = Number.POSITIVE_INFINITY) => ({
  failedAttempt,
  advisedMs,
  deadlineMs,
  nowMs: 1_000_000,
});

describe('retryDelayMs', () => {
  it('waits exactly the advised delay, whatever the backoff and its cap', () => {
    expect(retryDelayMs(at(1, 250), policy, highest)).toBe(250);
    expect(retryDelayMs(at(4, 0), policy, highest)).toBe(0);
    expect(retryDelayMs(at(1, 30_000), policy, lowest)).toBe(30_000);
  });

  it('backs off within [0, base × 2^(attempt−1)) with full jitter', () => {
    for (const [attempt, bound] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
    ] as const) {
      expect(retryDelayMs(at(attempt), policy, lowest)).toBe(0);
      const high = retryDelayMs(at(attempt), policy, highest);
      expect(high).toBeLessThan(bound);
      expect(high).toBeGreaterThanOrEqual(bound - 1);
    }
  });

  it('never backs off over maxDelayMs, however many attempts failed', () => {
    for (let attempt = 1; attempt <= 80; attempt += 1) {
      expect(retryDelayMs(at(attempt), policy, highest)).toBeLessThanOrEqual(policy.maxDelayMs);
    }
  });

  it('gives up when the next attempt could not start before the deadline', () => {
    const nowMs = at(1).nowMs;
    expect(retryDelayMs(at(1, 500, nowMs + 500), policy)).toBeUndefined();
    expect(retryDelayMs(at(1, 500, nowMs + 2000), policy)).toBe(500);
    expect(retryDelayMs(at(1, undefined, nowMs), policy, lowest)).toBeUndefined();
    expect(retryDelayMs(at(1, undefined, nowMs + 50), policy, highest)).toBeUndefined();
    expect(retryDelayMs(at(1, undefined, nowMs + 200), policy, highest)).toBe(99);
  });

  it('gives up rather than wait longer than a timer holds', () => {
    expect(retryDelayMs(at(1, MAX_TIMER_MS), policy)).toBe(MAX_TIMER_MS);
    expect(retryDelayMs(at(1, MAX_TIMER_MS + 1), policy)).toBeUndefined();
  });
});

describe('deadlineEpochMs', () => {
  it('reads a Date, epoch ms, Infinity or none', () => {
    expect(deadlineEpochMs(new Date(1_700_000_000_123))).toBe(1_700_000_000_123);
    expect(deadlineEpochMs(1_700_000_000_123)).toBe(1_700_000_000_123);
    expect(deadlineEpochMs(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(deadlineEpochMs(undefined)).toBe(Number.POSITIVE_INFINITY);
    expect(deadlineEpochMs(new Date(Number.NaN))).toBe(Number.POSITIVE_INFINITY);
  });
});
