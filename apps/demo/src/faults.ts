/**
 * The run's plan, fixed by a seed: which payments are poison, which handler calls fail
 * transiently, which have their database connection killed mid-transaction (with a database
 * ledger), which payments are published twice and how. Decisions are pure functions of
 * (seed, sequence number, attempt), never of call order, so a run with the same `--seed` meets
 * the same faults however the consumers interleave.
 */
import { seededRandom } from '@idemq/core/testing';

/** How a duplicate copy is published. */
export type DuplicateKind =
  /** Back to back with the original: both copies race for the record. */
  | 'concurrent'
  /** Once the original has completed: the copy must be skipped as a duplicate. */
  | 'after-completion';

export interface FaultPlanOptions {
  /** Unique payments (sequence numbers 0 … messages − 1). */
  messages: number;
  /** Fraction of payments published a second time, 0 … 1. */
  duplicates: number;
  seed: number;
  /** Fraction of payments whose handler always fails. @default 0.01 */
  poisonRate?: number;
  /** Probability that one handler call fails transiently. @default 0.05 */
  failureRate?: number;
  /**
   * Fraction of payments whose first handler call has its database connection killed after it
   * wrote its ledger row, as a crashed consumer's would close (used with a database ledger).
   * @default 0.02
   */
  killRate?: number;
  /**
   * The consumers' `retry.maxAttempts`. A non-poison payment never fails transiently on its last
   * attempt, so bad luck cannot dead-letter it and "completed = unique − poison" holds exactly.
   */
  maxAttempts: number;
}

export interface FaultPlan {
  readonly seed: number;
  /** Sequence numbers of the poison payments (exactly `round(messages × poisonRate)`). */
  readonly poison: ReadonlySet<number>;
  /** Sequence number → how its duplicate copy is published. */
  readonly duplicates: ReadonlyMap<number, DuplicateKind>;
  /** Whether the handler call for `seq` at record attempt `attempt` (1-based) must fail. */
  failsTransiently(seq: number, attempt: number): boolean;
  /**
   * Whether the handler call for `seq` at `attempt` loses its database connection after its
   * ledger INSERT, before COMMIT. Only first attempts of payments that are not poison, so the
   * payment still completes and "completed = unique − poison" holds.
   */
  killsConnection(seq: number, attempt: number): boolean;
  /** Simulated work for one handler call, 0–3 ms. */
  workMs(seq: number, attempt: number): number;
}

/** Defaults of the issue: 1 % poison, 5 % transient handler failures, 2 % connections killed. */
export const FAULT_DEFAULTS = Object.freeze({
  poisonRate: 0.01,
  failureRate: 0.05,
  killRate: 0.02,
});

/** Builds the deterministic plan for one run. */
export function planFaults(options: FaultPlanOptions): FaultPlan {
  const { messages, duplicates, seed, maxAttempts } = options;
  const poisonRate = options.poisonRate ?? FAULT_DEFAULTS.poisonRate;
  const failureRate = options.failureRate ?? FAULT_DEFAULTS.failureRate;
  const killRate = options.killRate ?? FAULT_DEFAULTS.killRate;

  const poisonOrder = shuffled(messages, mix(seed, 0x9e37));
  const poison = new Set(poisonOrder.slice(0, Math.round(messages * poisonRate)));

  // A separate shuffle, so poison payments are as likely to be duplicated as any other.
  const duplicateOrder = shuffled(messages, mix(seed, 0x7f4a));
  const duplicatePlan = new Map<number, DuplicateKind>();
  duplicateOrder.slice(0, Math.round(messages * duplicates)).forEach((seq, index) => {
    // Poison never completes, so its copy can only race with the original.
    const late = index % 2 === 1 && !poison.has(seq);
    duplicatePlan.set(seq, late ? 'after-completion' : 'concurrent');
  });

  return {
    seed,
    poison,
    duplicates: duplicatePlan,
    failsTransiently(seq, attempt) {
      if (poison.has(seq) || attempt >= maxAttempts) return false;
      return unit(mix(mix(seed, seq), attempt)) < failureRate;
    },
    killsConnection(seq, attempt) {
      if (poison.has(seq) || attempt !== 1 || maxAttempts < 2) return false;
      return unit(mix(seed ^ 0x3c6e, seq)) < killRate;
    },
    workMs(seq, attempt) {
      return mix(mix(seed ^ 0x5bd1, seq), attempt) % 4;
    },
  };
}

/** Fisher–Yates over 0 … n − 1 with a seeded random stream. */
function shuffled(n: number, seed: number): number[] {
  const next = seededRandom(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const tmp = order[i]!;
    order[i] = order[j]!;
    order[j] = tmp;
  }
  return order;
}

/** Combines two integers into a well-mixed 32-bit hash (murmur3's finaliser). */
function mix(a: number, b: number): number {
  let h = (Math.imul(a >>> 0, 0x85ebca6b) ^ Math.imul((b + 0x165667b1) >>> 0, 0xc2b2ae35)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function unit(hash: number): number {
  return hash / 0x1_0000_0000;
}
