import { describe, expect, it } from 'vitest';
import { faultSequence } from './faults.js';

describe('faultSequence', () => {
  it('interleaves a finite plan and then ends', () => {
    const sequence = faultSequence({
      kills: 2,
      storeRestarts: 1,
      storeKills: 1,
      brokerBreaks: 1,
      brokerRestarts: 0,
    });
    const seen = Array.from({ length: 6 }, () => sequence.next());
    expect(seen).toEqual(['kill', 'storeRestart', 'storeKill', 'brokerBreak', 'kill', undefined]);
    expect(sequence.total).toBe(5);
  });

  it('repeats a rotation without end', () => {
    const sequence = faultSequence({
      kills: 0,
      storeRestarts: 0,
      storeKills: 0,
      brokerBreaks: 0,
      brokerRestarts: 0,
      rotation: ['kill', 'brokerBreak'],
    });
    expect(Array.from({ length: 5 }, () => sequence.next())).toEqual([
      'kill',
      'brokerBreak',
      'kill',
      'brokerBreak',
      'kill',
    ]);
    expect(sequence.total).toBe(Number.POSITIVE_INFINITY);
  });
});
