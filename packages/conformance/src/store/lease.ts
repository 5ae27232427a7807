import { expect, vi } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const HOUR_MS = 60 * 60 * 1000;

/** S03, S04, S09: leases lapse, renew, and follow the store's clock only. */
export function registerLeaseCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S03',
    'lease expiry takeover: a new claim wins with a new token and attempt + 1; the old owner is refused',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const id = env.id();
      const old = expectClaimed(await store.claim(env.claimRequest(id, { leaseMs: shortMs })));
      expect(old.attempt).toBe(1);

      const early = await store.claim(env.claimRequest(id, { leaseMs: shortMs }));
      expect(early).toMatchObject({ status: 'in-progress', attempt: 1 });
      if (early.status === 'in-progress') {
        expect(early.retryAfterMs).toBeGreaterThan(0);
        expect(early.retryAfterMs).toBeLessThanOrEqual(shortMs);
      }

      await sleep(shortMs + slackMs);
      const taker = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(taker.attempt).toBe(2);
      expect(taker.token).not.toBe(old.token);
      expect(taker.fencingToken).toBeGreaterThan(old.fencingToken);

      const oldFenced = { ...id, token: old.token };
      expect(await store.complete({ ...oldFenced, ttlMs: LONG_MS })).toBe('lease-lost');
      expect(await store.renew({ ...oldFenced, leaseMs: LONG_MS })).toBe('lease-lost');
      expect(await store.inspect(id)).toMatchObject({
        state: 'IN_PROGRESS',
        attempt: 2,
        fencingToken: taker.fencingToken,
      });
      expect(await store.complete({ ...id, token: taker.token, ttlMs: LONG_MS })).toBe('ok');
      expect(await store.inspect(id)).toMatchObject({ state: 'COMPLETED', attempt: 2 });
    },
  );

  suite.case(
    'S04',
    'renew: a renewed record stays IN_PROGRESS past its original lease',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const id = env.id();
      const claim = expectClaimed(await store.claim(env.claimRequest(id, { leaseMs: shortMs })));
      await sleep(shortMs / 2);
      expect(await store.renew({ ...id, token: claim.token, leaseMs: shortMs * 4 })).toBe('ok');
      await sleep(shortMs / 2 + slackMs);

      // Past the original lease: without the renewal this claim would take the record over.
      expect(await store.claim(env.claimRequest(id))).toMatchObject({
        status: 'in-progress',
        attempt: 1,
      });
      const record = await store.inspect(id);
      expect(record).toMatchObject({ state: 'IN_PROGRESS', attempt: 1 });
      expect(record?.leaseExpiresAt).toBeGreaterThan(claim.leaseExpiresAt);
      expect(await store.complete({ ...id, token: claim.token, ttlMs: LONG_MS })).toBe('ok');
    },
  );

  suite.case(
    'S09',
    'store time: skewing the client clock by ±1 h changes no expiry decision',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const leaseMs = shortMs * 2;
      const store = await env.store();
      const realNow = Date.now.bind(Date);
      let offsetMs = 0;
      const dateNow = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
      // Restored even when an assertion fails: Date.now is global.
      env.defer('Date.now skew', () => dateNow.mockRestore());

      const leased = env.id('leased');
      const claim = expectClaimed(await store.claim(env.claimRequest(leased, { leaseMs })));
      const completed = env.id('completed');
      const done = expectClaimed(await store.claim(env.claimRequest(completed)));
      expect(await store.complete({ ...completed, token: done.token, ttlMs: leaseMs })).toBe('ok');

      // A client clock 1 h ahead would see both the lease and the COMPLETED TTL as lapsed.
      offsetMs = HOUR_MS;
      const ahead = await store.claim(env.claimRequest(leased));
      expect(ahead).toMatchObject({ status: 'in-progress', attempt: 1 });
      if (ahead.status === 'in-progress') expect(ahead.retryAfterMs).toBeLessThanOrEqual(leaseMs);
      expect(await store.claim(env.claimRequest(completed))).toMatchObject({
        status: 'duplicate',
      });
      expect(await store.renew({ ...leased, token: claim.token, leaseMs })).toBe('ok');

      // A client clock 1 h behind would report an hour left, and never let the lease lapse.
      offsetMs = -HOUR_MS;
      const behind = await store.claim(env.claimRequest(leased));
      expect(behind).toMatchObject({ status: 'in-progress', attempt: 1 });
      if (behind.status === 'in-progress') {
        expect(behind.retryAfterMs).toBeLessThanOrEqual(leaseMs);
      }
      await sleep(leaseMs + slackMs);
      const taken = expectClaimed(await store.claim(env.claimRequest(leased)));
      expect(taken.attempt).toBe(2);
      expect(await store.claim(env.claimRequest(completed))).toMatchObject({
        status: 'claimed',
        attempt: 1,
      });
      dateNow.mockRestore();
    },
  );
}
