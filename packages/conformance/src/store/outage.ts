import { ErrorCodes, isIdemqError, type Store } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { timed } from '../wait.js';
import { LONG_MS, type StoreEnv } from './storeEnv.js';

/** S10: an unreachable store fails fast, typed and retriable, and writes nothing. */
export function registerOutageCases(suite: Suite<StoreEnv, StoreHarness>): void {
  const { harness } = suite;
  const createUnreachable = harness.createUnreachableStore;
  if (!createUnreachable) {
    suite.omit(
      'S10',
      'the harness has no createUnreachableStore() (an in-process store cannot be unreachable)',
    );
    return;
  }

  suite.case(
    'S10',
    'outage: every operation rejects with a retriable IDEMQ_ERR_STORE_UNAVAILABLE within the bound, nothing half-written',
    async (env) => {
      const boundMs = env.timing.unavailableWithinMs;
      const unreachable = await createUnreachable.call(harness);
      env.defer('unreachable store', () => unreachable.close());
      const id = env.id();
      const fenced = { ...id, token: 'token-of-nobody' };
      const error = { name: 'Error', message: 'x' };
      const operations: Array<[string, (store: Store) => Promise<unknown>]> = [
        ['claim', (s) => s.claim(env.claimRequest(id))],
        ['claimMany', (s) => s.claimMany([env.claimRequest(id), env.claimRequest(env.id())])],
        ['complete', (s) => s.complete({ ...fenced, ttlMs: LONG_MS, result: 'r' })],
        ['fail', (s) => s.fail({ ...fenced, ttlMs: LONG_MS, error })],
        ['renew', (s) => s.renew({ ...fenced, leaseMs: LONG_MS })],
        ['release', (s) => s.release(fenced)],
        ['inspect', (s) => s.inspect(id)],
      ];

      for (const [name, operation] of operations) {
        const { elapsedMs, outcome } = await timed(() => operation(unreachable));
        expect(outcome.status, `${name} on an unreachable store`).toBe('rejected');
        if (outcome.status !== 'rejected') continue;
        const reason: unknown = outcome.reason;
        expect(isIdemqError(reason), `${name}: expected an IdemqError, got ${String(reason)}`).toBe(
          true,
        );
        expect(reason, name).toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE, retriable: true });
        expect(elapsedMs, `${name} took ${Math.round(elapsedMs)} ms`).toBeLessThanOrEqual(boundMs);
      }

      const closing = await timed(() => unreachable.close());
      expect(closing.outcome.status, 'close() of an unreachable store').toBe('fulfilled');
      expect(closing.elapsedMs).toBeLessThanOrEqual(boundMs);

      // Where the healthy store reaches the same server, none of the above left a trace there.
      const healthy = await env.store();
      expect(await healthy.inspect(id)).toBeUndefined();
    },
  );
}
