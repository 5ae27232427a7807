import type { Deadline } from '@grpc/grpc-js';
import { backoffDelayMs } from '@idemq/core';

/** The longest wait `setTimeout` can hold: a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export interface BackoffPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface RetryMoment {
  /** The attempt that just failed (1-based). */
  failedAttempt: number;
  /** The delay the server advised, if any. */
  advisedMs: number | undefined;
  /** When the call must end, epoch ms; `Infinity` for none. */
  deadlineMs: number;
  nowMs: number;
}

/**
 * The wait before the next attempt, or `undefined` to give up: the server's advised delay exactly
 * (it knows when the key's record frees up), else full-jitter backoff. Giving up when the next
 * attempt could not start before the deadline hands the caller the server's answer at once,
 * rather than DEADLINE_EXCEEDED after a wait that could not help.
 */
export function retryDelayMs(
  moment: RetryMoment,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number | undefined {
  const delayMs =
    moment.advisedMs ??
    backoffDelayMs(
      moment.failedAttempt,
      { ...policy, maxAttempts: Number.POSITIVE_INFINITY, jitter: 'full' },
      random,
    );
  if (delayMs > MAX_TIMER_MS) return undefined;
  if (moment.nowMs + delayMs >= moment.deadlineMs) return undefined;
  return delayMs;
}

/** A grpc-js deadline (a Date or epoch ms; `Infinity` or none for no deadline) as epoch ms. */
export function deadlineEpochMs(deadline: Deadline | undefined): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}
