import type { CommandCounter } from '../commandCounter.js';
import type { BenchMessage } from '../workload.js';

/** How a contender treated one message. */
export type Outcome = 'processed' | 'duplicate' | 'in-progress';

/** One idempotency implementation, ready to take messages. */
export interface Contender {
  /** Handles one message the way its library's consumer would; resolves how it was treated. */
  handle(message: BenchMessage): Promise<Outcome>;
  /** Counts the commands this contender's own clients send (its round trips). */
  readonly sent: CommandCounter;
  /** SCAN patterns matching every key it may write for ids under its namespace. */
  readonly keyPatterns: readonly string[];
  /** Local-cache hits so far, where the contender has such a cache. */
  cacheHits?(): number;
  close(): Promise<void>;
}

export interface ContenderSetup {
  redisUrl: string;
  /** Every requestId this contender sees starts with it; its keys are derived from it. */
  namespace: string;
  /** The business handler: a no-op that counts its runs. */
  handler: () => void;
}

/** The idempotency record lifetimes every contender is given, so they keep the same state. */
export const RETENTION = Object.freeze({
  /** idemq's default lease; Powertools' in-progress expiry and the baseline's lease. */
  leaseMs: 40_000,
  /** idemq's default COMPLETED TTL (24 h), used by every contender. */
  completedTtlMs: 86_400_000,
});
