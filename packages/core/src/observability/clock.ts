/** A source of epoch-millisecond time. */
export interface Clock {
  now(): number;
}

/**
 * Wall-clock epoch ms that never goes backwards and ignores later changes to the system clock
 * (`performance.now()` is monotonic), so a clock step cannot expire or resurrect a lease.
 */
export const monotonicClock: Clock = {
  now: () => Math.floor(performance.timeOrigin + performance.now()),
};
