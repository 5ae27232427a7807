import type { ResultOmission } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

/**
 * S16: a completion whose result could not be stored. The handler ran, so the record is
 * COMPLETED all the same; what duplicates learn instead of the result is the marker.
 */
export function registerResultOmittedCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S16',
    'complete with resultOmitted stores no result; claim, claimMany and inspect report the marker',
    async (env) => {
      const store = await env.store();
      const reasons: ResultOmission[] = ['too-large', 'not-serializable'];
      for (const reason of reasons) {
        const id = env.id(reason);
        const owner = expectClaimed(await store.claim(env.claimRequest(id)));
        expect(
          await store.complete({
            ...id,
            token: owner.token,
            ttlMs: LONG_MS,
            resultOmitted: reason,
          }),
        ).toBe('ok');
        // Twice: a store that caches completions must answer the same from its cache.
        for (let i = 0; i < 2; i++) {
          const duplicate = await store.claim(env.claimRequest(id));
          expect(duplicate).toMatchObject({ status: 'duplicate', resultOmitted: reason });
          expect(duplicate).not.toHaveProperty('result');
        }
        const [many] = await store.claimMany([env.claimRequest(id)]);
        expect(many).toMatchObject({ status: 'duplicate', resultOmitted: reason });
        expect(many).not.toHaveProperty('result');
        const record = await store.inspect(id);
        expect(record).toMatchObject({ state: 'COMPLETED', resultOmitted: reason });
        expect(record).not.toHaveProperty('result');
      }

      // Neither a result nor a marker: the duplicate reports neither.
      const plain = env.id('plain');
      const plainOwner = expectClaimed(await store.claim(env.claimRequest(plain)));
      expect(await store.complete({ ...plain, token: plainOwner.token, ttlMs: LONG_MS })).toBe(
        'ok',
      );
      const plainDuplicate = await store.claim(env.claimRequest(plain));
      expect(plainDuplicate.status).toBe('duplicate');
      expect(plainDuplicate).not.toHaveProperty('result');
      expect(plainDuplicate).not.toHaveProperty('resultOmitted');

      // A result beside a marker is the answer; the marker is not kept.
      const both = env.id('both');
      const bothOwner = expectClaimed(await store.claim(env.claimRequest(both)));
      expect(
        await store.complete({
          ...both,
          token: bothOwner.token,
          ttlMs: LONG_MS,
          result: '"kept"',
          resultOmitted: 'too-large',
        }),
      ).toBe('ok');
      const bothDuplicate = await store.claim(env.claimRequest(both));
      expect(bothDuplicate).toMatchObject({ status: 'duplicate', result: '"kept"' });
      expect(bothDuplicate).not.toHaveProperty('resultOmitted');
      expect(await store.inspect(both)).not.toHaveProperty('resultOmitted');
    },
  );
}
