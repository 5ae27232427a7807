import { ErrorCodes } from '../errors/codes.js';
import { isIdemqError } from '../errors/IdemqError.js';
import { backoffDelayMs } from './backoff.js';
import type { Execution } from './execute.js';
import type { RetryPolicy } from './types.js';

/** How the engine settles a delivery, and which event it reports. */
export type Decision =
  | { verb: 'ack'; event: 'processed' | 'duplicate' }
  | { verb: 'retry'; delayMs: number; event: 'retry' | 'in-progress' | 'store-error' }
  | { verb: 'reject'; reason: string; code: string; attempt: number | undefined }
  | { verb: 'release'; event: 'lease-lost' };

/**
 * The decision table of DESIGN.md §4, as one pure function: every transport settles the same
 * execution the same way.
 */
export function decide(
  execution: Execution<unknown>,
  policy: Required<RetryPolicy>,
  storeErrorRetryDelayMs: number,
  random: () => number = Math.random,
): Decision {
  switch (execution.kind) {
    case 'processed':
    case 'processed-unclaimed':
      return { verb: 'ack', event: 'processed' };
    case 'duplicate':
      return { verb: 'ack', event: 'duplicate' };
    case 'in-progress':
      // Never ack: the owner may still fail. Come back when its lease would have lapsed.
      return { verb: 'retry', delayMs: execution.retryAfterMs, event: 'in-progress' };
    case 'key-reuse':
      return {
        verb: 'reject',
        reason: 'requestId reused with a different payload',
        code: ErrorCodes.KEY_REUSE,
        attempt: undefined,
      };
    case 'lease-lost':
      return { verb: 'release', event: 'lease-lost' };
    case 'store-error':
      return { verb: 'retry', delayMs: storeErrorRetryDelayMs, event: 'store-error' };
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
      if (attempt >= policy.maxAttempts) {
        return {
          verb: 'reject',
          reason: `gave up after ${attempt} attempt(s): ${error.message}`,
          code: ErrorCodes.MAX_ATTEMPTS,
          attempt,
        };
      }
      return { verb: 'retry', delayMs: backoffDelayMs(attempt, policy, random), event: 'retry' };
    }
  }
}
