import type { CommandCounter } from '../commandCounter.js';
import type { BenchMessage } from '../workload.js';

/** How a contender treated one message. */
export type Outcome = 'processed' | 'duplicate' | 'in-progress';

/** The servers a contender can keep its records on. */
export const STORES = ['redis', 'postgres'] as const;
export type StoreName = (typeof STORES)[number];

interface ContenderBase {
  /** Handles one message the way its library's consumer would; resolves how it was treated. */
  handle(message: BenchMessage): Promise<Outcome>;
  /** Counts the commands (statements) this contender's own clients send: its round trips. */
  readonly sent: CommandCounter;
  /** Round trips as the library counts them itself, where it does (`store.stats()`). */
  libraryRoundTrips?(): number;
  /** Local-cache hits so far, where the contender has such a cache. */
  cacheHits?(): number;
  close(): Promise<void>;
}

/** A contender whose records are Redis keys. */
export interface RedisContender extends ContenderBase {
  readonly store: 'redis';
  /** SCAN patterns matching every key it may write for ids under its namespace. */
  readonly keyPatterns: readonly string[];
}

/** A contender whose records are the rows of a table of its own. */
export interface PostgresContender extends ContenderBase {
  readonly store: 'postgres';
  /** Its table (quoted), created when it opened and dropped when it closes. */
  readonly table: string;
}

/** One idempotency implementation, ready to take messages. */
export type Contender = RedisContender | PostgresContender;

export interface ContenderSetup {
  redisUrl: string;
  postgresUrl: string;
  /** Every requestId this contender sees starts with it; its keys (or table) derive from it. */
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
