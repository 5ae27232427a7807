import { fingerprint, type RecordId } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const A = fingerprint('{"amount":10}');
const B = fingerprint('{"amount":11}');
const error = { name: 'Error', message: 'x' };

/**
 * S13: a fingerprint on one side only, and the fingerprint a takeover leaves. S20: answers that
 * are not claims (`key-reuse`, `duplicate`, `in-progress`) change nothing, in every state.
 */
export function registerFingerprintCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S13',
    'fingerprint on one side only: never key-reuse; a takeover keeps the record’s or adds its own, never changes it',
    async (env) => {
      const store = await env.store();
      const fail = async (id: RecordId, token: string) =>
        expect(await store.fail({ ...id, token, ttlMs: LONG_MS, error })).toBe('ok');

      // A record with one, a claim without: compared as equal, in every state.
      const withOne = env.id('with-one');
      const owner = expectClaimed(await store.claim(env.claimRequest(withOne, { fingerprint: A })));
      expect(await store.claim(env.claimRequest(withOne))).toMatchObject({
        status: 'in-progress',
      });
      expect(await store.complete({ ...withOne, token: owner.token, ttlMs: LONG_MS })).toBe('ok');
      expect(await store.claim(env.claimRequest(withOne))).toMatchObject({ status: 'duplicate' });
      expect((await store.inspect(withOne))?.fingerprint).toBe(A);
      // A cache of answers must remember the record's fingerprint, not the claim's absent one.
      expect(await store.claim(env.claimRequest(withOne, { fingerprint: B }))).toEqual({
        status: 'key-reuse',
      });

      // A record without one, a claim with one: the same; answering changes nothing.
      const without = env.id('without');
      const plain = expectClaimed(await store.claim(env.claimRequest(without)));
      expect(await store.claim(env.claimRequest(without, { fingerprint: B }))).toMatchObject({
        status: 'in-progress',
      });
      expect(await store.complete({ ...without, token: plain.token, ttlMs: LONG_MS })).toBe('ok');
      expect(await store.claim(env.claimRequest(without, { fingerprint: B }))).toMatchObject({
        status: 'duplicate',
      });
      expect((await store.claim(env.claimRequest(without, { fingerprint: A }))).status).toBe(
        'duplicate',
      );
      expect((await store.inspect(without))?.fingerprint).toBeUndefined();

      // A takeover without one keeps the record's: another payload is still refused after it.
      const kept = env.id('kept');
      await fail(
        kept,
        expectClaimed(await store.claim(env.claimRequest(kept, { fingerprint: A }))).token,
      );
      const retaker = expectClaimed(await store.claim(env.claimRequest(kept)));
      expect(retaker.attempt).toBe(2);
      expect((await store.inspect(kept))?.fingerprint).toBe(A);
      expect(await store.release({ ...kept, token: retaker.token })).toBe('ok');
      expect(await store.claim(env.claimRequest(kept, { fingerprint: B }))).toEqual({
        status: 'key-reuse',
      });
      const finisher = expectClaimed(await store.claim(env.claimRequest(kept)));
      expect(await store.complete({ ...kept, token: finisher.token, ttlMs: LONG_MS })).toBe('ok');
      expect((await store.inspect(kept))?.fingerprint).toBe(A);
      expect(await store.claim(env.claimRequest(kept, { fingerprint: B }))).toEqual({
        status: 'key-reuse',
      });

      // A takeover with one of a record without one adds it.
      const added = env.id('added');
      await fail(added, expectClaimed(await store.claim(env.claimRequest(added))).token);
      const adder = expectClaimed(await store.claim(env.claimRequest(added, { fingerprint: A })));
      expect(adder.attempt).toBe(2);
      expect((await store.inspect(added))?.fingerprint).toBe(A);
      await fail(added, adder.token);
      expect(await store.claim(env.claimRequest(added, { fingerprint: B }))).toEqual({
        status: 'key-reuse',
      });
      expect(await store.claim(env.claimRequest(added, { fingerprint: A }))).toMatchObject({
        status: 'claimed',
        attempt: 3,
      });

      // A lapsed lease is compared too, and its takeover without one keeps the fingerprint.
      const { shortMs, slackMs } = env.timing;
      const lapsed = env.id('lapsed');
      expectClaimed(
        await store.claim(env.claimRequest(lapsed, { leaseMs: shortMs, fingerprint: A })),
      );
      await sleep(shortMs + slackMs);
      expect(await store.claim(env.claimRequest(lapsed, { fingerprint: B }))).toEqual({
        status: 'key-reuse',
      });
      expect(expectClaimed(await store.claim(env.claimRequest(lapsed))).attempt).toBe(2);
      expect(await store.inspect(lapsed)).toMatchObject({ attempt: 2, fingerprint: A });
    },
  );

  suite.case(
    'S20',
    'key-reuse in every state (live or lapsed IN_PROGRESS, COMPLETED, FAILED, RELEASED), duplicate and in-progress change nothing: no field, no expiry',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const withA = (id: RecordId) => env.claimRequest(id, { fingerprint: A });

      const live = env.id('live');
      expectClaimed(await store.claim(withA(live)));
      const lapsed = env.id('lapsed');
      const lapsing = expectClaimed(
        await store.claim(env.claimRequest(lapsed, { leaseMs: shortMs, fingerprint: A })),
      );
      const completed = env.id('completed');
      const done = expectClaimed(await store.claim(withA(completed)));
      expect(
        await store.complete({ ...completed, token: done.token, ttlMs: LONG_MS, result: '"r"' }),
      ).toBe('ok');
      const failed = env.id('failed');
      const failing = expectClaimed(await store.claim(withA(failed)));
      expect(await store.fail({ ...failed, token: failing.token, ttlMs: LONG_MS, error })).toBe(
        'ok',
      );
      const released = env.id('released');
      const giving = expectClaimed(await store.claim(withA(released)));
      expect(await store.release({ ...released, token: giving.token })).toBe('ok');
      await sleep(shortMs + slackMs);

      const ids = { live, lapsed, completed, failed, released };
      for (const [state, id] of Object.entries(ids)) {
        const before = await store.inspect(id);
        expect(before, state).toBeDefined();
        expect(await store.claim(env.claimRequest(id, { fingerprint: B })), state).toEqual({
          status: 'key-reuse',
        });
        expect(
          await store.claimMany([env.claimRequest(id, { fingerprint: B, leaseMs: shortMs })]),
          state,
        ).toEqual([{ status: 'key-reuse' }]);
        expect(await store.inspect(id), `${state} after key-reuse`).toEqual(before);
      }
      // Refused by key-reuse, the lapsed lease is still its owner's.
      expect(await store.complete({ ...lapsed, token: lapsing.token, ttlMs: LONG_MS })).toBe('ok');

      const answers: Array<[string, RecordId, string]> = [
        ['in-progress', live, 'in-progress'],
        ['duplicate', completed, 'duplicate'],
      ];
      for (const [what, id, status] of answers) {
        const before = await store.inspect(id);
        for (const fingerprint of [A, undefined]) {
          const request = env.claimRequest(id, {
            leaseMs: shortMs,
            retainMs: shortMs,
            ...(fingerprint === undefined ? {} : { fingerprint }),
          });
          expect((await store.claim(request)).status, what).toBe(status);
          expect((await store.claimMany([request]))[0]?.status, what).toBe(status);
        }
        expect(await store.inspect(id), `after ${what}`).toEqual(before);
      }
    },
  );
}
