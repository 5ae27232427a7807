import {
  type CompleteRequest,
  DEFAULT_MAX_RESULT_BYTES,
  ErrorCodes,
  fingerprint,
  type RecordId,
  type SettledTransition,
} from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

const ok: SettledTransition = { status: 'fulfilled', value: 'ok' };
const lost: SettledTransition = { status: 'fulfilled', value: 'lease-lost' };

/**
 * S22, S23: `completeMany` answers per record, in request order, in one round trip, each as
 * `complete` would; a refusal of one record leaves the others made.
 */
export function registerBatchCompletionCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S22',
    'batch completions: completeMany gives per-record outcomes in request order (one round trip when counted), each as complete would: a result, a resultOmitted marker or none is stored; a foreign or spent token is lease-lost and changes nothing; the same claim twice completes once',
    async (env) => {
      const store = await env.store();
      expect(await store.completeMany([])).toEqual([]);

      const claimOf = async (label: string) => {
        const id = env.id(label);
        const claimed = expectClaimed(
          await store.claim(env.claimRequest(id, { fingerprint: fingerprint(label) })),
        );
        return { id, token: claimed.token, label };
      };
      const withResult = await claimOf('result');
      const omitted = await claimOf('omitted');
      const bare = await claimOf('bare');
      const foreign = await claimOf('foreign');
      const twice = await claimOf('twice');
      const spent = await claimOf('spent');
      expect(await store.complete({ ...spent.id, token: spent.token, ttlMs: LONG_MS })).toBe('ok');
      const longer = await claimOf('longer');
      const before = await store.inspect(foreign.id);

      const requests: CompleteRequest[] = [
        { ...withResult.id, token: withResult.token, ttlMs: LONG_MS, result: 'r-1' },
        { ...omitted.id, token: omitted.token, ttlMs: LONG_MS, resultOmitted: 'too-large' },
        { ...bare.id, token: bare.token, ttlMs: LONG_MS },
        { ...foreign.id, token: withResult.token, ttlMs: LONG_MS, result: 'forged' },
        { ...twice.id, token: twice.token, ttlMs: LONG_MS, result: 'first' },
        { ...twice.id, token: twice.token, ttlMs: LONG_MS, result: 'second' },
        { ...spent.id, token: spent.token, ttlMs: LONG_MS, result: 'late' },
        // Other settings may travel in another call; the answer keeps its place.
        { ...longer.id, token: longer.token, ttlMs: 2 * LONG_MS, result: 'r-longer' },
      ];
      const roundTripsBefore = env.harness.countRoundTrips?.();
      const outcomes = await store.completeMany(requests);
      const roundTripsAfter = env.harness.countRoundTrips?.();
      expect(outcomes).toEqual([ok, ok, ok, lost, ok, lost, lost, ok]);

      const duplicateOf = (held: { id: RecordId; label: string }) =>
        store.claim(env.claimRequest(held.id, { fingerprint: fingerprint(held.label) }));
      expect(await duplicateOf(withResult)).toMatchObject({
        status: 'duplicate',
        result: 'r-1',
      });
      const omittedDuplicate = await duplicateOf(omitted);
      expect(omittedDuplicate).toMatchObject({ status: 'duplicate', resultOmitted: 'too-large' });
      expect(omittedDuplicate).not.toHaveProperty('result');
      const bareDuplicate = await duplicateOf(bare);
      expect(bareDuplicate.status).toBe('duplicate');
      expect(bareDuplicate).not.toHaveProperty('result');
      expect(bareDuplicate).not.toHaveProperty('resultOmitted');
      expect(await duplicateOf(twice), 'the first completion stands').toMatchObject({
        status: 'duplicate',
        result: 'first',
      });
      const spentDuplicate = await duplicateOf(spent);
      expect(spentDuplicate, 'a spent token writes nothing').not.toHaveProperty('result');
      expect(await duplicateOf(longer)).toMatchObject({
        status: 'duplicate',
        result: 'r-longer',
      });
      const longerRecord = await store.inspect(longer.id);
      const withResultRecord = await store.inspect(withResult.id);
      expect(
        (longerRecord?.expiresAt ?? 0) - (withResultRecord?.expiresAt ?? 0),
        'each request keeps its own ttlMs',
      ).toBeGreaterThan(LONG_MS / 2);

      // The forged completion changed nothing; the real owner still completes.
      expect(await store.inspect(foreign.id)).toEqual(before);
      expect(
        await store.completeMany([{ ...foreign.id, token: foreign.token, ttlMs: LONG_MS }]),
      ).toEqual([ok]);

      if (roundTripsBefore !== undefined && roundTripsAfter !== undefined) {
        expect(roundTripsAfter - roundTripsBefore, 'round trips for one completeMany').toBe(1);
      }
    },
  );

  suite.case(
    'S23',
    'batch completions, per record: a result over the limit is that request’s rejection (IDEMQ_ERR_RESULT_TOO_LARGE, nothing written, the owner completes it again without the result) while the rest of the batch is made; one claim completed with other settings than its previous completion in the batch is still lease-lost',
    async (env) => {
      const maxBytes = env.harness.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
      const store = await env.store();
      const claimOf = async (label: string) => {
        const id = env.id(label);
        return { id, token: expectClaimed(await store.claim(env.claimRequest(id))).token };
      };
      const before = await claimOf('before');
      const over = await claimOf('over');
      const after = await claimOf('after');
      const again = await claimOf('again');
      const overRecord = await store.inspect(over.id);

      const outcomes = await store.completeMany([
        { ...before.id, token: before.token, ttlMs: LONG_MS, result: 'b' },
        { ...over.id, token: over.token, ttlMs: LONG_MS, result: 'é'.repeat(maxBytes) },
        { ...after.id, token: after.token, ttlMs: LONG_MS, result: 'a' },
        { ...again.id, token: again.token, ttlMs: LONG_MS, result: 'first' },
        { ...again.id, token: again.token, ttlMs: 2 * LONG_MS },
      ]);
      expect(outcomes).toHaveLength(5);
      expect(outcomes[0]).toEqual(ok);
      const refused = outcomes[1];
      expect(refused?.status).toBe('rejected');
      if (refused?.status === 'rejected') {
        expect(refused.reason).toMatchObject({
          code: ErrorCodes.RESULT_TOO_LARGE,
          retriable: false,
        });
      }
      expect(outcomes.slice(2)).toEqual([ok, ok, lost]);
      expect(await store.inspect(over.id), 'nothing written').toEqual(overRecord);
      expect(await store.claim(env.claimRequest(again.id))).toMatchObject({
        status: 'duplicate',
        result: 'first',
      });
      expect(await store.claim(env.claimRequest(after.id))).toMatchObject({
        status: 'duplicate',
        result: 'a',
      });

      // The refused record is still its owner's to complete, without the result.
      expect(
        await store.completeMany([
          { ...over.id, token: over.token, ttlMs: LONG_MS, resultOmitted: 'too-large' },
        ]),
      ).toEqual([ok]);
      expect(await store.claim(env.claimRequest(over.id))).toMatchObject({
        status: 'duplicate',
        resultOmitted: 'too-large',
      });
    },
  );
}
