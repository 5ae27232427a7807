import { ErrorCodes } from '../errors/codes.js';
import { isIdemqError } from '../errors/idemqError.js';
import { refusesRecord } from '../errors/store.js';
import { backoffDelayMs } from './backoff.js';
import type { Execution } from './execute.js';
import type { RetryPolicy } from './types.js';

/** How the engine settles a delivery, and which event it reports. */
export type Decision =
  | { verb: 'ack'; event: 'processed' | 'duplicate' }
  | { verb: 'retry'; delayMs: number; event: 'retry' | 'in-progress' | 'store-error' }
  | { verb: 'reject'; reason: string; code: string; attempt: number | undefined }
  | { verb: 'release'; event: 'lease-lost' | 'abandoned' };

/** The consumer settings the decision depends on. */
export interface DecisionPolicy {
  retry: Required<RetryPolicy>;
  /** Redelivery delay after a store error (fail-closed). */
  storeErrorRetryDelayMs: number;
  /** Cap on the wait of a copy that found the record IN_PROGRESS under another owner. */
  inProgressRetryMaxDelayMs: number;
}

/**
 * The decision table of docs/design.md, as one pure function: every transport settles the same
 * execution the same way.
 */
export function decide(
  execution: Execution<unknown>,
  policy: DecisionPolicy,
  random: () => number = Math.random,
): Decision {
  switch (execution.kind) {
    case 'processed':
    case 'processed-unclaimed':
      return { verb: 'ack', event: 'processed' };
    case 'duplicate':
      return { verb: 'ack', event: 'duplicate' };
    case 'in-progress':
      // Never ack: the owner may still fail. Come back when its lease would have lapsed, or
      // sooner (the cap): an owner usually finishes well inside its lease.
      return {
        verb: 'retry',
        delayMs: Math.min(execution.retryAfterMs, policy.inProgressRetryMaxDelayMs),
        event: 'in-progress',
      };
    case 'key-reuse':
      return {
        verb: 'reject',
        reason: 'requestId reused with a different payload',
        code: ErrorCodes.KEY_REUSE,
        attempt: undefined,
      };
    case 'lease-lost':
      return { verb: 'release', event: 'lease-lost' };
    case 'abandoned':
      return { verb: 'release', event: 'abandoned' };
    case 'store-error':
      // A refusal of this record stays one: dead-lettered rather than retried for ever. Anything
      // else (an outage, a configuration refused for every record) is retried: fail-closed.
      if (refusesRecord(execution.error)) {
        return {
          verb: 'reject',
          reason: execution.error.message,
          code: ErrorCodes.STORE_REJECTED,
          attempt: execution.attempt,
        };
      }
      return { verb: 'retry', delayMs: policy.storeErrorRetryDelayMs, event: 'store-error' };
    case 'exhausted':
      return {
        verb: 'reject',
        reason: `gave up after ${execution.attempt - 1} attempt(s)${
          execution.lastError ? `: ${execution.lastError.message}` : ''
        }`,
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: execution.attempt - 1,
      };
    case 'failed': {
      const { error, attempt } = execution;
      if (!execution.retriable) {
        return {
          verb: 'reject',
          reason: error.message,
          code: isIdemqError(error) ? error.code : ErrorCodes.HANDLER_NON_RETRIABLE,
          attempt,
        };
      }
      if (attempt >= policy.retry.maxAttempts) {
        return {
          verb: 'reject',
          reason: `gave up after ${attempt} attempt(s): ${error.message}`,
          code: ErrorCodes.MAX_ATTEMPTS,
          attempt,
        };
      }
      return {
        verb: 'retry',
        delayMs: backoffDelayMs(attempt, policy.retry, random),
        event: 'retry',
      };
    }
  }
}
