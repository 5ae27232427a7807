import { type ClaimOutcome, fingerprint } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const FRESH_IDS = 16;
const CONTESTED_IDS = 8;

/**
 * S11, S14, S21: `claimMany` answers per id, in request order, in one round trip, each as `claim`
 * would with that request's own settings; atomic per id.
 */
export function registerBatchCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S11',
    'batch: claimMany gives per-id outcomes in request order (one round trip when counted)',
    async (env) => {
      const store = await env.store();
      const error = { name: 'Error', message: 'first try failed' };

      // One id in each state a claim can meet.
      const completed = env.id('completed');
      const done = expectClaimed(await store.claim(env.claimRequest(completed)));
      await store.complete({ ...completed, token: done.token, ttlMs: LONG_MS, result: 'r1' });
      const running = env.id('running');
      expectClaimed(await store.claim(env.claimRequest(running)));
      const failed = env.id('failed');
      const failing = expectClaimed(await store.claim(env.claimRequest(failed)));
      await store.fail({ ...failed, token: failing.token, ttlMs: LONG_MS, error });
      const reused = env.id('reused');
      expectClaimed(await store.claim(env.claimRequest(reused, { fingerprint: fingerprint('a') })));
      const released = env.id('released');
      const giving = expectClaimed(await store.claim(env.claimRequest(released)));
      await store.release({ ...released, token: giving.token });
      const fresh = Array.from({ length: FRESH_IDS }, () => env.id('fresh'));
      const twice = env.id('twice');

      const requests = [
        env.claimRequest(completed),
        env.claimRequest(running),
        env.claimRequest(failed),
        env.claimRequest(reused, { fingerprint: fingerprint('b') }),
        env.claimRequest(released),
        ...fresh.map((id) => env.claimRequest(id)),
        // The same id twice in one batch behaves as two claims in that order.
        env.claimRequest(twice),
        env.claimRequest(twice),
      ];
      const roundTripsBefore = env.harness.countRoundTrips?.();
      const outcomes = await store.claimMany(requests);
      const roundTripsAfter = env.harness.countRoundTrips?.();

      expect(outcomes).toHaveLength(requests.length);
      expect(outcomes[0]).toMatchObject({ status: 'duplicate', result: 'r1' });
      expect(outcomes[1]).toMatchObject({ status: 'in-progress', attempt: 1 });
      expect(outcomes[2]).toMatchObject({ status: 'claimed', attempt: 2, previousError: error });
      expect(outcomes[3]).toEqual({ status: 'key-reuse' });
      expect(outcomes[4], 'a released record keeps its attempt').toMatchObject({
        status: 'claimed',
        attempt: 1,
      });
      const freshOutcomes = outcomes.slice(5, 5 + FRESH_IDS);
      for (const outcome of freshOutcomes)
        expect(outcome).toMatchObject({ status: 'claimed', attempt: 1 });
      const tokens = freshOutcomes.map((o) => (o.status === 'claimed' ? o.token : undefined));
      expect(new Set(tokens).size).toBe(FRESH_IDS);
      expect(outcomes[5 + FRESH_IDS]).toMatchObject({ status: 'claimed', attempt: 1 });
      expect(outcomes[6 + FRESH_IDS]).toMatchObject({ status: 'in-progress', attempt: 1 });

      // Each claim is real: its token completes its own record.
      const [firstFresh] = fresh;
      const firstOutcome = freshOutcomes[0];
      if (firstFresh && firstOutcome?.status === 'claimed') {
        expect(
          await store.complete({ ...firstFresh, token: firstOutcome.token, ttlMs: LONG_MS }),
        ).toBe('ok');
      }

      if (roundTripsBefore !== undefined && roundTripsAfter !== undefined) {
        expect(roundTripsAfter - roundTripsBefore, 'round trips for one claimMany').toBe(1);
      }
    },
  );

  suite.case(
    'S14',
    'batch rules: an empty batch answers []; one id twice acts as two claims in request order, whatever their settings; concurrent batches claim each id once',
    async (env) => {
      const store = await env.store();
      expect(await store.claimMany([])).toEqual([]);

      // Requests with other settings may travel apart; the order of one id's claims may not.
      const other = env.id('other');
      const twice = env.id('twice');
      const short = { leaseMs: LONG_MS / 2, retainMs: LONG_MS / 2 };
      const reordered = await store.claimMany([
        env.claimRequest(other, short),
        env.claimRequest(twice),
        env.claimRequest(twice, short),
      ]);
      expect(reordered[0]).toMatchObject({ status: 'claimed' });
      expect(reordered[1], 'the first claim of the id').toMatchObject({
        status: 'claimed',
        attempt: 1,
      });
      expect(reordered[2], 'the second claim of the id').toMatchObject({
        status: 'in-progress',
        attempt: 1,
      });
      const first = reordered[1];
      if (first?.status === 'claimed') {
        const record = await store.inspect(twice);
        expect(record?.leaseExpiresAt, 'the lease of the first claim').toBe(first.leaseExpiresAt);
        expect(record?.fencingToken).toBe(first.fencingToken);
      }

      const payloads = env.id('payloads');
      expect(
        await store.claimMany([
          env.claimRequest(payloads, { fingerprint: fingerprint('a') }),
          env.claimRequest(payloads, { fingerprint: fingerprint('b') }),
        ]),
      ).toMatchObject([{ status: 'claimed' }, { status: 'key-reuse' }]);

      // Atomic per id: two batches racing over the same ids claim each exactly once.
      const contested = Array.from({ length: CONTESTED_IDS }, () => env.id('contested'));
      const [forward, backward] = await Promise.all([
        store.claimMany(contested.map((id) => env.claimRequest(id))),
        store.claimMany([...contested].reverse().map((id) => env.claimRequest(id))),
      ]);
      backward.reverse();
      contested.forEach((id, i) => {
        const statuses = [forward[i]?.status, backward[i]?.status].sort();
        expect(statuses, id.requestId).toEqual(['claimed', 'in-progress']);
      });
    },
  );

  suite.case(
    'S21',
    'batch claims as claim would: each request keeps its own lease and retainMs; a lapsed lease is taken over (attempt + 1, fingerprint kept, old owner refused); an expired record is claimed as attempt 1',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const A = fingerprint('a');
      const lapsed = env.id('lapsed');
      const old = expectClaimed(
        await store.claim(env.claimRequest(lapsed, { leaseMs: shortMs, fingerprint: A })),
      );
      const expired = env.id('expired');
      const gone = expectClaimed(
        await store.claim(env.claimRequest(expired, { leaseMs: shortMs, retainMs: 1 })),
      );
      await sleep(shortMs + slackMs);

      const short = env.id('short');
      const longLease = env.id('long-lease');
      const longRetain = env.id('long-retain');
      const outcomes = await store.claimMany([
        env.claimRequest(short, { leaseMs: shortMs, retainMs: 2 * shortMs }),
        env.claimRequest(lapsed),
        env.claimRequest(longLease),
        env.claimRequest(longRetain, { leaseMs: shortMs }),
        env.claimRequest(expired, { leaseMs: shortMs, retainMs: shortMs }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('claimed'));
      const taker = expectClaimed(outcomes[1] as ClaimOutcome);
      expect(taker.attempt, 'a lapsed lease taken over in a batch').toBe(2);
      expect(taker.fencingToken).toBeGreaterThan(old.fencingToken);
      expect(await store.inspect(lapsed)).toMatchObject({ attempt: 2, fingerprint: A });
      expect(await store.complete({ ...lapsed, token: old.token, ttlMs: LONG_MS })).toBe(
        'lease-lost',
      );
      const reborn = expectClaimed(outcomes[4] as ClaimOutcome);
      expect(reborn.attempt, 'an expired record claimed in a batch').toBe(1);
      expect(reborn.fencingToken).toBeGreaterThan(gone.fencingToken);

      // Past the short leases: only the claims given one have lapsed.
      await sleep(shortMs + slackMs);
      expect(await store.claim(env.claimRequest(longLease)), 'a long lease').toMatchObject({
        status: 'in-progress',
      });
      expect(await store.claim(env.claimRequest(lapsed)), 'a long lease').toMatchObject({
        status: 'in-progress',
      });
      expect(await store.inspect(short), 'within its retainMs').toMatchObject({
        state: 'IN_PROGRESS',
      });

      // Past the short retention: only the claim given one is gone.
      await sleep(2 * shortMs);
      expect(await store.inspect(short), 'after lease + retainMs').toBeUndefined();
      expect(await store.inspect(longRetain), 'a long retainMs').toMatchObject({
        state: 'IN_PROGRESS',
        attempt: 1,
      });
    },
  );
}
