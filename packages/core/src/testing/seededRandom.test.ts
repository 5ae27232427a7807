import { describe, expect, it } from 'vitest';
import { randomSeed, seededRandom } from './seededRandom.js';

describe('seededRandom', () => {
  it('replays the same stream for the same seed, another for another seed', () => {
    const take = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(take(42)).toEqual(take(42));
    expect(take(42)).not.toEqual(take(43));
  });

  it('stays in [0, 1) and spreads over it', () => {
    const next = seededRandom(7);
    const draws = Array.from({ length: 10_000 }, next);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const lowHalf = draws.filter((d) => d < 0.5).length;
    expect(lowHalf).toBeGreaterThan(4_700);
    expect(lowHalf).toBeLessThan(5_300);
  });

  it('randomSeed gives 32-bit unsigned integers', () => {
    for (let i = 0; i < 100; i++) {
      const seed = randomSeed();
      expect(Number.isInteger(seed) && seed >= 0 && seed <= 0xffff_ffff).toBe(true);
    }
  });
});
