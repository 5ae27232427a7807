import { ErrorCodes, fingerprint, isIdemqError, RecordStates, type StoredError } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/** S05–S08: what FAILED and COMPLETED records remember. */
export function registerRecordCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S05',
    'FAILED memory: fail keeps attempt and error; the next claim wins with attempt + 1',
    async (env) => {
      const store = await env.store();
      const id = env.id();
      const error: StoredError = { name: 'TypeError', message: 'boom ✗', code: 'E_BOOM' };

      const first = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(first.previousError).toBeUndefined();
      expect(await store.fail({ ...id, token: first.token, ttlMs: LONG_MS, error })).toBe('ok');
      expect(await store.inspect(id)).toMatchObject({
        state: 'FAILED',
        attempt: 1,
        lastError: error,
      });

      const second = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(second.attempt).toBe(2);
      expect(second.previousError).toEqual(error);

      // release gives the claim back without counting it: the next claim reuses attempt 2.
      expect(await store.release({ ...id, token: second.token })).toBe('ok');
      expect(await store.inspect(id)).toMatchObject({
        state: RecordStates.RELEASED,
        lastError: error,
      });
      const third = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(third.attempt).toBe(2);
      expect(third.previousError).toEqual(error);

      const next: StoredError = { name: 'Error', message: 'again' };
      expect(await store.fail({ ...id, token: third.token, ttlMs: LONG_MS, error: next })).toBe(
        'ok',
      );
      expect(await store.inspect(id)).toMatchObject({ state: 'FAILED', attempt: 2 });
      expect((await store.inspect(id))?.lastError).toEqual(next);
      const fourth = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(fourth).toMatchObject({ attempt: 3, previousError: next });
    },
  );

  suite.case(
    'S06',
    'COMPLETED retention: duplicates until the TTL, then the id is claimable again',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const id = env.id();
      const claim = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(await store.complete({ ...id, token: claim.token, ttlMs: shortMs })).toBe('ok');

      for (let i = 0; i < 2; i++) {
        const duplicate = await store.claim(env.claimRequest(id));
        expect(duplicate.status).toBe('duplicate');
        if (duplicate.status === 'duplicate') expect(typeof duplicate.completedAt).toBe('number');
      }
      expect(await store.inspect(id)).toMatchObject({ state: 'COMPLETED', attempt: 1 });

      await sleep(shortMs + slackMs);
      expect(await store.inspect(id)).toBeUndefined();
      const again = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(again.attempt).toBe(1);
      // Downstream systems compare fencing tokens: an expired record must not restart them.
      expect(again.fencingToken).toBeGreaterThan(claim.fencingToken);
    },
  );

  suite.case(
    'S07',
    'fingerprint: same id with another payload is key-reuse, with the same payload normal',
    async (env) => {
      const store = await env.store();
      const id = env.id();
      const original = fingerprint('{"amount":10}');
      const other = fingerprint('{"amount":11}');

      const claim = expectClaimed(
        await store.claim(env.claimRequest(id, { fingerprint: original })),
      );
      const inProgress = await store.inspect(id);
      expect(await store.claim(env.claimRequest(id, { fingerprint: other }))).toEqual({
        status: 'key-reuse',
      });
      expect(await store.inspect(id)).toEqual(inProgress);
      expect(await store.claim(env.claimRequest(id, { fingerprint: original }))).toMatchObject({
        status: 'in-progress',
      });

      expect(await store.complete({ ...id, token: claim.token, ttlMs: LONG_MS })).toBe('ok');
      expect(await store.claim(env.claimRequest(id, { fingerprint: other }))).toEqual({
        status: 'key-reuse',
      });
      expect(await store.claim(env.claimRequest(id, { fingerprint: original }))).toMatchObject({
        status: 'duplicate',
      });

      // FAILED records keep the fingerprint too: a retry with another payload is refused.
      const failing = env.id('failing');
      const failed = expectClaimed(
        await store.claim(env.claimRequest(failing, { fingerprint: original })),
      );
      const error = { name: 'Error', message: 'x' };
      expect(await store.fail({ ...failing, token: failed.token, ttlMs: LONG_MS, error })).toBe(
        'ok',
      );
      expect(await store.claim(env.claimRequest(failing, { fingerprint: other }))).toEqual({
        status: 'key-reuse',
      });
      expect(await store.claim(env.claimRequest(failing, { fingerprint: original }))).toMatchObject(
        { status: 'claimed', attempt: 2 },
      );
    },
  );

  suite.case(
    'S08',
    'stored result: returned to duplicates byte-for-byte; over the size limit a typed error, nothing written',
    async (env) => {
      const maxBytes = env.harness.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
      const store = await env.store();

      // Multi-byte characters, escapes, NUL and JSON-looking text: nothing may be reinterpreted.
      const result = '{"total":"10.00 €","note":"naïve 😀","raw":"\\u0000\\n","nul":"\u0000"} ';
      const id = env.id();
      const claim = expectClaimed(await store.claim(env.claimRequest(id)));
      expect(await store.complete({ ...id, token: claim.token, ttlMs: LONG_MS, result })).toBe(
        'ok',
      );
      for (let i = 0; i < 2; i++) {
        expect(await store.claim(env.claimRequest(id))).toMatchObject({
          status: 'duplicate',
          result,
        });
      }

      const atLimit = env.id('at-limit');
      const fits = 'x'.repeat(maxBytes);
      const fitting = expectClaimed(await store.claim(env.claimRequest(atLimit)));
      expect(
        await store.complete({ ...atLimit, token: fitting.token, ttlMs: LONG_MS, result: fits }),
      ).toBe('ok');
      const duplicate = await store.claim(env.claimRequest(atLimit));
      expect(duplicate.status === 'duplicate' && duplicate.result === fits).toBe(true);

      // The limit is in UTF-8 bytes: 'é' is 2 bytes, so this is one character short of 2× over.
      const overId = env.id('over');
      const over = 'é'.repeat(Math.floor(maxBytes / 2) + 1);
      const owner = expectClaimed(await store.claim(env.claimRequest(overId)));
      const before = await store.inspect(overId);
      const refused = await store
        .complete({ ...overId, token: owner.token, ttlMs: LONG_MS, result: over })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(isIdemqError(refused), `expected a typed error, got ${String(refused)}`).toBe(true);
      expect(refused).toMatchObject({ code: ErrorCodes.RESULT_TOO_LARGE });
      expect(await store.inspect(overId)).toEqual(before);
      // The owner still holds the record and can complete without the result.
      expect(await store.complete({ ...overId, token: owner.token, ttlMs: LONG_MS })).toBe('ok');
    },
  );
}
