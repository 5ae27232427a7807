import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff.js';
import type { RetryPolicy } from './types.js';

const exact: Required<RetryPolicy> = {
  maxAttempts: 5,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  jitter: 'none',
};
const jittered: Required<RetryPolicy> = { ...exact, jitter: 'full' };

describe('backoffDelayMs', () => {
  it('waits exactly baseDelayMs before the first retry', () => {
    expect(backoffDelayMs(1, exact)).toBe(100);
  });

  it('doubles with every attempt', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelayMs(attempt, exact))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('caps the delay at maxDelayMs', () => {
    expect(backoffDelayMs(5, exact)).toBe(1_000);
    expect(backoffDelayMs(6, exact)).toBe(1_000);
  });

  it('stays finite and capped for huge attempt numbers', () => {
    expect(backoffDelayMs(10_000, exact)).toBe(1_000);
    const wide = { ...exact, maxDelayMs: Number.MAX_SAFE_INTEGER };
    expect(Number.isFinite(backoffDelayMs(10_000, wide))).toBe(true);
  });

  it('treats attempt 0 and below as the first retry', () => {
    expect(backoffDelayMs(0, exact)).toBe(100);
    expect(backoffDelayMs(-3, exact)).toBe(100);
  });

  it('is 0 when baseDelayMs is 0', () => {
    expect(backoffDelayMs(7, { ...exact, baseDelayMs: 0 })).toBe(0);
  });

  describe('full jitter', () => {
    it('draws 0 when random() is 0', () => {
      expect(backoffDelayMs(3, jittered, () => 0)).toBe(0);
    });

    it('scales the capped delay by random()', () => {
      expect(backoffDelayMs(1, jittered, () => 0.5)).toBe(50);
      expect(backoffDelayMs(3, jittered, () => 0.25)).toBe(100);
      expect(backoffDelayMs(20, jittered, () => 0.5)).toBe(500);
    });

    it('never exceeds the un-jittered delay, even for random() just below 1', () => {
      expect(backoffDelayMs(2, jittered, () => 0.999_999_999)).toBeLessThan(200);
      expect(backoffDelayMs(2, jittered, () => 0.999_999_999)).toBeGreaterThanOrEqual(199);
      expect(backoffDelayMs(9, jittered, () => 0.999_999_999)).toBeLessThanOrEqual(1_000);
    });

    it('stays within [0, capped] for many draws and returns integers', () => {
      let seed = 42;
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      const outOfBounds: string[] = [];
      let draws = 0;
      for (let attempt = 1; attempt <= 12; attempt++) {
        const ceiling = Math.min(1_000, 100 * 2 ** (attempt - 1));
        for (let i = 0; i < 50; i++) {
          const delay = backoffDelayMs(attempt, jittered, random);
          draws += 1;
          if (!Number.isInteger(delay) || delay < 0 || delay > ceiling) {
            outOfBounds.push(`attempt ${attempt}: ${delay}`);
          }
        }
      }
      expect(draws).toBe(600);
      expect(outOfBounds).toEqual([]);
    });

    it('uses the injected random source, not Math.random', () => {
      let calls = 0;
      backoffDelayMs(2, jittered, () => {
        calls += 1;
        return 0.1;
      });
      expect(calls).toBe(1);
    });

    it('does not call random() when jitter is none', () => {
      let calls = 0;
      backoffDelayMs(2, exact, () => {
        calls += 1;
        return 0.1;
      });
      expect(calls).toBe(0);
    });
  });
});
