import { describe, expect, it } from 'vitest';
import { RABBITMQ_DEFAULTS } from './options.js';
import { chooseTier } from './tiers.js';

describe('chooseTier', () => {
  const tiers = [100, 500, 1_000];

  it('picks the smallest tier at least as long as the delay: never early', () => {
    expect(chooseTier(tiers, 1)).toEqual({ tierMs: 100, hop: false });
    expect(chooseTier(tiers, 100)).toEqual({ tierMs: 100, hop: false });
    expect(chooseTier(tiers, 101)).toEqual({ tierMs: 500, hop: false });
    expect(chooseTier(tiers, 1_000)).toEqual({ tierMs: 1_000, hop: false });
  });

  it('hops through the largest tier when the delay is longer than every tier', () => {
    expect(chooseTier(tiers, 1_001)).toEqual({ tierMs: 1_000, hop: true });
    expect(chooseTier(tiers, 10 ** 9)).toEqual({ tierMs: 1_000, hop: true });
  });

  it('rounds the engine default backoff cap (60 s) to a tier of its own', () => {
    expect(chooseTier(RABBITMQ_DEFAULTS.retryTiersMs, 60_000)).toEqual({
      tierMs: 60_000,
      hop: false,
    });
  });
});
