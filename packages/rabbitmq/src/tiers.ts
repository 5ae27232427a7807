/** Where a delayed retry waits, and whether it needs more hops after that. */
export interface TierChoice {
  /** The tier queue's TTL. */
  tierMs: number;
  /**
   * The delay is longer than the largest tier: the message carries a not-before time and is
   * sent round the tiers again (never handed to the consumer) until that time has come.
   */
  hop: boolean;
}

/**
 * The smallest tier ≥ `delayMs`, so a delayed message never comes back early: the delay is
 * rounded up to the next tier (RabbitMQ expires messages only at a queue's head, so one queue
 * holds one delay). Longer than every tier: the largest, with more hops to follow.
 */
export function chooseTier(tiersMs: readonly number[], delayMs: number): TierChoice {
  for (const tierMs of tiersMs) {
    if (tierMs >= delayMs) return { tierMs, hop: false };
  }
  const largest = tiersMs[tiersMs.length - 1];
  if (largest === undefined) throw new RangeError('no retry tiers configured');
  return { tierMs: largest, hop: true };
}
