import { type RecordId, RecordStates } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

/** S12: a lapsed lease nobody took over still belongs to its owner. */
export function registerLapsedLeaseCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S12',
    'lapsed lease, nobody took over: the owner can still complete, fail, renew or release',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const claimShort = async (id: RecordId) =>
        expectClaimed(await store.claim(env.claimRequest(id, { leaseMs: shortMs }))).token;
      const [completed, failed, renewed, released] = [
        'completed',
        'failed',
        'renewed',
        'released',
      ].map((label) => env.id(label)) as [RecordId, RecordId, RecordId, RecordId];
      const tokens = {
        completed: await claimShort(completed),
        failed: await claimShort(failed),
        renewed: await claimShort(renewed),
        released: await claimShort(released),
      };
      // Every lease has lapsed; the records are still IN_PROGRESS (retainMs is long).
      await sleep(shortMs + slackMs);
      expect(await store.inspect(completed)).toMatchObject({ state: RecordStates.IN_PROGRESS });

      expect(
        await store.complete({ ...completed, token: tokens.completed, ttlMs: LONG_MS }),
        'complete after the lease lapsed',
      ).toBe('ok');
      expect(await store.inspect(completed)).toMatchObject({ state: 'COMPLETED', attempt: 1 });
      expect(await store.claim(env.claimRequest(completed))).toMatchObject({
        status: 'duplicate',
      });

      const error = { name: 'Error', message: 'late failure' };
      expect(
        await store.fail({ ...failed, token: tokens.failed, ttlMs: LONG_MS, error }),
        'fail after the lease lapsed',
      ).toBe('ok');
      expect(await store.inspect(failed)).toMatchObject({
        state: 'FAILED',
        attempt: 1,
        lastError: error,
      });

      expect(
        await store.renew({ ...renewed, token: tokens.renewed, leaseMs: LONG_MS }),
        'renew after the lease lapsed',
      ).toBe('ok');
      // The renewal re-arms the lease: no takeover now.
      expect(await store.claim(env.claimRequest(renewed))).toMatchObject({
        status: 'in-progress',
        attempt: 1,
      });
      expect(await store.complete({ ...renewed, token: tokens.renewed, ttlMs: LONG_MS })).toBe(
        'ok',
      );

      expect(
        await store.release({ ...released, token: tokens.released }),
        'release after the lease lapsed',
      ).toBe('ok');
      expect(await store.inspect(released)).toMatchObject({ state: 'RELEASED', attempt: 1 });
      expect(expectClaimed(await store.claim(env.claimRequest(released))).attempt).toBe(1);
    },
  );
}
