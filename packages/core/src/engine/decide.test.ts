import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import {
  HandlerFailedError,
  NonRetriableError,
  StoreRejectedError,
  StoreUnavailableError,
} from '../errors/index.js';
import { ResultNotSerializableError } from '../errors/store.js';
import { backoffDelayMs } from './backoff.js';
import { decide } from './decide.js';
import type { Execution } from './execute.js';
import type { RetryPolicy } from './types.js';

const policy: Required<RetryPolicy> = {
  maxAttempts: 3,
  baseDelayMs: 100,
  maxDelayMs: 10_000,
  jitter: 'none',
};
const STORE_RETRY_MS = 1_234;
const IN_PROGRESS_CAP_MS = 60_000;

function decideFor(execution: Execution<unknown>, p = policy, random = () => 0.5) {
  return decide(
    execution,
    {
      retry: p,
      storeErrorRetryDelayMs: STORE_RETRY_MS,
      inProgressRetryMaxDelayMs: IN_PROGRESS_CAP_MS,
    },
    random,
  );
}

function failed(attempt: number, error: Error = new Error('boom'), retriable = true) {
  return { kind: 'failed', error, attempt, retriable } as const;
}

describe('decide (the decision table of docs/design.md)', () => {
  it('claimed + handler succeeded → ack as processed', () => {
    expect(decideFor({ kind: 'processed', result: 1, attempt: 1, fencingToken: 7 })).toEqual({
      verb: 'ack',
      event: 'processed',
    });
  });

  it('fail-open run without a claim → ack as processed', () => {
    expect(
      decideFor({
        kind: 'processed-unclaimed',
        result: 1,
        attempt: 1,
        storeError: new StoreUnavailableError('down'),
      }),
    ).toEqual({ verb: 'ack', event: 'processed' });
  });

  it('COMPLETED → ack as duplicate, handler not run', () => {
    expect(decideFor({ kind: 'duplicate', completedAt: 1 })).toEqual({
      verb: 'ack',
      event: 'duplicate',
    });
    expect(decideFor({ kind: 'duplicate', result: { ok: true }, completedAt: 1 })).toEqual({
      verb: 'ack',
      event: 'duplicate',
    });
  });

  it('IN_PROGRESS (other owner) → retry after the remaining lease, never ack', () => {
    const decision = decideFor({ kind: 'in-progress', retryAfterMs: 37_500, attempt: 2 });
    expect(decision).toEqual({ verb: 'retry', delayMs: 37_500, event: 'in-progress' });
    expect(decision.verb).not.toBe('ack');
  });

  it('IN_PROGRESS waits at most inProgressRetryMaxDelayMs', () => {
    const capped = decide(
      { kind: 'in-progress', retryAfterMs: 37_500, attempt: 2 },
      { retry: policy, storeErrorRetryDelayMs: STORE_RETRY_MS, inProgressRetryMaxDelayMs: 5_000 },
    );
    expect(capped).toEqual({ verb: 'retry', delayMs: 5_000, event: 'in-progress' });
  });

  it('abandoned by a stopping consumer → release, no attempt counted', () => {
    expect(decideFor({ kind: 'abandoned', attempt: 2, error: new Error('stopping') })).toEqual({
      verb: 'release',
      event: 'abandoned',
    });
  });

  it('IN_PROGRESS ignores the backoff policy and the store retry delay', () => {
    expect(decideFor({ kind: 'in-progress', retryAfterMs: 5, attempt: 1 })).toMatchObject({
      delayMs: 5,
    });
  });

  it('key reuse → reject with KEY_REUSE', () => {
    expect(decideFor({ kind: 'key-reuse' })).toEqual({
      verb: 'reject',
      reason: expect.stringMatching(/different payload/),
      code: ErrorCodes.KEY_REUSE,
      attempt: undefined,
    });
  });

  it('lease lost during the handler → release, no complete', () => {
    expect(decideFor({ kind: 'lease-lost', attempt: 2 })).toEqual({
      verb: 'release',
      event: 'lease-lost',
    });
  });

  it('store unavailable → retry after storeErrorRetryDelayMs (fail-closed)', () => {
    expect(
      decideFor({ kind: 'store-error', error: new StoreUnavailableError('x'), attempt: undefined }),
    ).toEqual({ verb: 'retry', delayMs: STORE_RETRY_MS, event: 'store-error' });
    // Also when the store failed after the claim (attempt known): still the store delay.
    expect(
      decideFor({ kind: 'store-error', error: new StoreUnavailableError('x'), attempt: 2 }),
    ).toEqual({ verb: 'retry', delayMs: STORE_RETRY_MS, event: 'store-error' });
  });

  it('store refused the record → reject with IDEMQ_ERR_STORE_REJECTED, not retried', () => {
    const refused = new StoreRejectedError('Redis claim refused: WRONGTYPE', { affects: 'record' });
    expect(decideFor({ kind: 'store-error', error: refused, attempt: undefined })).toEqual({
      verb: 'reject',
      reason: 'Redis claim refused: WRONGTYPE',
      code: ErrorCodes.STORE_REJECTED,
      attempt: undefined,
    });
    // Refused after the claim (the completion): the attempt is known and reported.
    expect(decideFor({ kind: 'store-error', error: refused, attempt: 2 })).toMatchObject({
      verb: 'reject',
      code: ErrorCodes.STORE_REJECTED,
      attempt: 2,
    });
  });

  it('store refused every record (its configuration) → retry like an outage (fail-closed)', () => {
    const refused = new StoreRejectedError('NOPERM', { affects: 'store' });
    expect(decideFor({ kind: 'store-error', error: refused, attempt: undefined })).toEqual({
      verb: 'retry',
      delayMs: STORE_RETRY_MS,
      event: 'store-error',
    });
  });

  describe('claimed + handler threw a retriable error', () => {
    it('below maxAttempts → retry with backoff(attempt)', () => {
      expect(decideFor(failed(1))).toEqual({ verb: 'retry', delayMs: 100, event: 'retry' });
      expect(decideFor(failed(2))).toEqual({ verb: 'retry', delayMs: 200, event: 'retry' });
    });

    it('uses the jittered backoff with the injected random source', () => {
      const full = { ...policy, jitter: 'full' as const };
      const random = () => 0.25;
      expect(decideFor(failed(2), full, random)).toEqual({
        verb: 'retry',
        delayMs: backoffDelayMs(2, full, random),
        event: 'retry',
      });
      expect(decideFor(failed(2), full, random)).toMatchObject({ delayMs: 50 });
    });

    it('at exactly maxAttempts → reject MAX_ATTEMPTS with that attempt count', () => {
      expect(decideFor(failed(3, new Error('db down')))).toEqual({
        verb: 'reject',
        reason: 'gave up after 3 attempt(s): db down',
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: 3,
      });
    });

    it('above maxAttempts → reject MAX_ATTEMPTS', () => {
      expect(decideFor(failed(4))).toMatchObject({
        verb: 'reject',
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: 4,
      });
    });

    it('maxAttempts 1 → the first failure is dead-lettered', () => {
      expect(decideFor(failed(1), { ...policy, maxAttempts: 1 })).toMatchObject({
        verb: 'reject',
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: 1,
      });
    });

    it('a HandlerFailedError (non-Error thrown) is retried like any retriable error', () => {
      expect(decideFor(failed(1, new HandlerFailedError('oops')))).toEqual({
        verb: 'retry',
        delayMs: 100,
        event: 'retry',
      });
    });
  });

  describe('claimed + handler threw a non-retriable error', () => {
    it('NonRetriableError → reject with its code at once, whatever the attempt', () => {
      expect(decideFor(failed(1, new NonRetriableError('account closed'), false))).toEqual({
        verb: 'reject',
        reason: 'account closed',
        code: ErrorCodes.HANDLER_NON_RETRIABLE,
        attempt: 1,
      });
    });

    it('another non-retriable idemq error keeps its own code', () => {
      expect(decideFor(failed(2, new ResultNotSerializableError('BigInt'), false))).toMatchObject({
        verb: 'reject',
        code: ErrorCodes.RESULT_NOT_SERIALIZABLE,
        attempt: 2,
      });
    });

    it('a plain Error marked non-retriable → HANDLER_NON_RETRIABLE', () => {
      expect(decideFor(failed(1, new TypeError('bad'), false))).toEqual({
        verb: 'reject',
        reason: 'bad',
        code: ErrorCodes.HANDLER_NON_RETRIABLE,
        attempt: 1,
      });
    });
  });

  describe('claim beyond maxAttempts (crash loop) → exhausted', () => {
    it('rejects MAX_ATTEMPTS with the attempts actually made and the last error', () => {
      expect(
        decideFor({
          kind: 'exhausted',
          attempt: 4,
          lastError: { name: 'Error', message: 'worker crashed' },
        }),
      ).toEqual({
        verb: 'reject',
        reason: 'gave up after 3 attempt(s): worker crashed',
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: 3,
      });
    });

    it('without a last error (lease lapses only)', () => {
      expect(decideFor({ kind: 'exhausted', attempt: 6, lastError: undefined })).toEqual({
        verb: 'reject',
        reason: 'gave up after 5 attempt(s)',
        code: ErrorCodes.MAX_ATTEMPTS,
        attempt: 5,
      });
    });
  });
});
