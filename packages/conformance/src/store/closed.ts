import { ErrorCodes, isIdemqError, type Store } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

/** S15: a closed store refuses everything, typed; closing is idempotent. */
export function registerClosedCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S15',
    'after close(): every operation rejects with IDEMQ_ERR_STORE_CLOSED (not retriable); close() is idempotent',
    async (env) => {
      const store = await env.store();
      const id = env.id();
      const held = expectClaimed(await store.claim(env.claimRequest(id)));

      await Promise.all([store.close(), store.close()]);
      await expect(store.close(), 'close() after close()').resolves.toBeUndefined();

      const fenced = { ...id, token: held.token };
      const error = { name: 'Error', message: 'x' };
      const operations: Array<[string, (store: Store) => Promise<unknown>]> = [
        ['claim', (s) => s.claim(env.claimRequest(env.id()))],
        ['claimMany', (s) => s.claimMany([env.claimRequest(env.id()), env.claimRequest(id)])],
        ['claimMany([])', (s) => s.claimMany([])],
        ['complete', (s) => s.complete({ ...fenced, ttlMs: LONG_MS })],
        ['completeMany', (s) => s.completeMany([{ ...fenced, ttlMs: LONG_MS }])],
        ['completeMany([])', (s) => s.completeMany([])],
        ['fail', (s) => s.fail({ ...fenced, ttlMs: LONG_MS, error })],
        ['renew', (s) => s.renew({ ...fenced, leaseMs: LONG_MS })],
        ['release', (s) => s.release(fenced)],
        ['inspect', (s) => s.inspect(id)],
      ];
      for (const [name, operation] of operations) {
        const reason = await operation(store).then(
          (value) => ({ resolved: value }),
          (rejected: unknown) => rejected,
        );
        expect(isIdemqError(reason), `${name} after close(): got ${JSON.stringify(reason)}`).toBe(
          true,
        );
        expect(reason, name).toMatchObject({ code: ErrorCodes.STORE_CLOSED, retriable: false });
      }
    },
  );
}
