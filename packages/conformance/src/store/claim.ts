import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const CONCURRENT_CLAIMS = 50;

/** S01, S02: one claim wins, the others learn the lease left; stale tokens change nothing. */
export function registerClaimCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S01',
    'atomic claim: of 50 concurrent claims exactly one wins; the others get the time left on its lease',
    async (env) => {
      const store = await env.store();
      const id = env.id();
      const request = env.claimRequest(id);
      const sentAt = performance.now();
      const outcomes = await Promise.all(
        Array.from({ length: CONCURRENT_CLAIMS }, () => store.claim(request)),
      );
      const elapsedMs = performance.now() - sentAt;
      const claimed = outcomes.filter((o) => o.status === 'claimed');
      const inProgress = outcomes.filter((o) => o.status === 'in-progress');
      expect(claimed).toHaveLength(1);
      expect(inProgress).toHaveLength(CONCURRENT_CLAIMS - 1);
      // The time actually left on the winner's lease, which began after `sentAt`: never a constant.
      const leastLeftMs = request.leaseMs - elapsedMs - env.timing.slackMs;
      for (const outcome of inProgress) {
        expect(outcome).toMatchObject({ status: 'in-progress', attempt: 1 });
        if (outcome.status !== 'in-progress') continue;
        expect(outcome.retryAfterMs, 'retryAfterMs: the lease left').toBeLessThanOrEqual(
          request.leaseMs,
        );
        expect(outcome.retryAfterMs, 'retryAfterMs: the lease left').toBeGreaterThanOrEqual(
          leastLeftMs,
        );
      }
      expect(await store.inspect(id)).toMatchObject({ state: 'IN_PROGRESS', attempt: 1 });
    },
  );

  suite.case(
    'S02',
    'fenced transitions: a stale or forged token is refused with lease-lost and changes nothing',
    async (env) => {
      const store = await env.store();
      const id = env.id();
      const first = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(await store.release({ ...id, token: first.token })).toBe('ok');
      const second = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(second.token).not.toBe(first.token);
      expect(second.attempt, 'a released claim is not an attempt').toBe(1);
      // "Strictly increasing for the store's lifetime": a record released to absent included.
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);

      const refusedTokens = [first.token, `${second.token}-forged`, 'forged'];
      const expectAllRefused = async () => {
        for (const token of refusedTokens) {
          const fenced = { ...id, token };
          expect(await store.complete({ ...fenced, ttlMs: LONG_MS }), `complete(${token})`).toBe(
            'lease-lost',
          );
          const error = { name: 'Error', message: 'stale' };
          expect(await store.fail({ ...fenced, ttlMs: LONG_MS, error }), `fail(${token})`).toBe(
            'lease-lost',
          );
          expect(await store.renew({ ...fenced, leaseMs: LONG_MS }), `renew(${token})`).toBe(
            'lease-lost',
          );
          expect(await store.release(fenced), `release(${token})`).toBe('lease-lost');
        }
      };

      const whileOwned = await store.inspect(id);
      await expectAllRefused();
      expect(await store.inspect(id)).toEqual(whileOwned);

      expect(await store.complete({ ...id, token: second.token, ttlMs: LONG_MS })).toBe('ok');
      // Completion spends the owner's token too: it cannot fail or reopen the record.
      refusedTokens.push(second.token);
      const completed = await store.inspect(id);
      expect(completed).toMatchObject({ state: 'COMPLETED', attempt: 1 });
      await expectAllRefused();
      expect(await store.inspect(id)).toEqual(completed);

      // A token for a record that was never claimed creates nothing.
      const absent = env.id('absent');
      expect(await store.complete({ ...absent, token: first.token, ttlMs: LONG_MS })).toBe(
        'lease-lost',
      );
      expect(await store.inspect(absent)).toBeUndefined();
    },
  );
}
