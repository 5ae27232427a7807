import type { ClaimedOutcome } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const CLAIMS_PER_INSTANCE = 20;

/** S19: two instances on one backend, as two processes on one server. */
export function registerSharedBackendCases(suite: Suite<StoreEnv, StoreHarness>): void {
  if (!suite.harness.sharedBackend) {
    suite.omit('S19', 'the harness does not say its stores share one backend (sharedBackend)');
    return;
  }

  suite.case(
    'S19',
    'two instances on one backend: of racing claims exactly one wins; fencing tokens rise across instances, takeovers and expiry',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const [a, b] = [await env.store(), await env.store()];

      const raced = env.id('raced');
      const outcomes = await Promise.all(
        Array.from({ length: CLAIMS_PER_INSTANCE }, () => [
          a.claim(env.claimRequest(raced)),
          b.claim(env.claimRequest(raced)),
        ]).flat(),
      );
      expect(outcomes.filter((o) => o.status === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'in-progress')).toHaveLength(
        2 * CLAIMS_PER_INSTANCE - 1,
      );

      // Each instance claims ids of its own first, then one of the other's ids is taken over
      // and one is claimed after its expiry: every fencing token of an id tops the last one.
      const lapsing = env.id('lapsing');
      const expiring = env.id('expiring');
      const warmUp = Array.from({ length: 3 }, () => env.id('warm-up'));
      for (const id of warmUp) expectClaimed(await a.claim(env.claimRequest(id)));
      const first = expectClaimed(await a.claim(env.claimRequest(lapsing, { leaseMs: shortMs })));
      const done = expectClaimed(await a.claim(env.claimRequest(expiring)));
      expect(await a.complete({ ...expiring, token: done.token, ttlMs: shortMs })).toBe('ok');

      await sleep(shortMs + slackMs);
      const taker = expectClaimed(await b.claim(env.claimRequest(lapsing)));
      expect(taker.attempt).toBe(2);
      expectRising(taker, first, 'a takeover through the other instance');
      expect(await a.complete({ ...lapsing, token: first.token, ttlMs: LONG_MS })).toBe(
        'lease-lost',
      );
      expect(await a.inspect(lapsing)).toMatchObject({
        state: 'IN_PROGRESS',
        fencingToken: taker.fencingToken,
      });

      const reborn = expectClaimed(await b.claim(env.claimRequest(expiring)));
      expect(reborn.attempt).toBe(1);
      expectRising(reborn, done, 'a claim through the other instance after expiry');

      // And back: the first instance keeps rising above what the second issued.
      expect(await b.release({ ...expiring, token: reborn.token })).toBe('ok');
      const back = expectClaimed(await a.claim(env.claimRequest(expiring)));
      expectRising(back, reborn, 'a claim through the first instance after a release');
    },
  );
}

function expectRising(later: ClaimedOutcome, earlier: ClaimedOutcome, what: string): void {
  expect(later.fencingToken, what).toBeGreaterThan(earlier.fencingToken);
  expect(later.token, what).not.toBe(earlier.token);
}
