import type { Clock } from '../observability/clock.js';

/** A clock that only moves when told: for unit tests of expiry without sleeping. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(epochMs: number): void;
}

export function manualClock(startMs = 1_700_000_000_000): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    advance(ms) {
      current += ms;
    },
    set(epochMs) {
      current = epochMs;
    },
  };
}
