import { RecordStates } from '@idemq/core';
import { expect } from 'vitest';
import type { StoreHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectClaimed, LONG_MS, type StoreEnv } from './storeEnv.js';

/** S17, S18: every record expires when the requests that shaped it say, then it is absent. */
export function registerExpiryCases(suite: Suite<StoreEnv, StoreHarness>): void {
  suite.case(
    'S17',
    'abandoned claim: an IN_PROGRESS record lives lease + retainMs (a renewal pushes that out, never in), a RELEASED one keeps its expiry; then absent, and a new claim is attempt 1',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const short = { leaseMs: shortMs, retainMs: 2 * shortMs };

      // Expires at 3 × shortMs: its owner crashed and nobody claimed it since.
      const abandoned = env.id('abandoned');
      const crashed = expectClaimed(await store.claim(env.claimRequest(abandoned, short)));
      // Released at once: keeps the expiry of its claim, 3 × shortMs.
      const released = env.id('released');
      const giving = expectClaimed(await store.claim(env.claimRequest(released, short)));
      expect(await store.release({ ...released, token: giving.token })).toBe('ok');
      // Expires at 5 × shortMs; a renewal to a shorter lease must not bring that in.
      const shrunk = env.id('shrunk');
      const shrinking = expectClaimed(
        await store.claim(env.claimRequest(shrunk, { leaseMs: shortMs, retainMs: 4 * shortMs })),
      );
      expect(await store.renew({ ...shrunk, token: shrinking.token, leaseMs: 1 })).toBe('ok');
      // Would expire at 3 × shortMs; renewed to a lease of 5 × shortMs at once, it lives longer.
      const pushed = env.id('pushed');
      const pushing = expectClaimed(await store.claim(env.claimRequest(pushed, short)));
      expect(await store.renew({ ...pushed, token: pushing.token, leaseMs: 5 * shortMs })).toBe(
        'ok',
      );

      // The lease lapsed, the retention did not: the record still counts the lost attempt.
      await sleep(shortMs + slackMs);
      expect(await store.inspect(abandoned), 'an abandoned claim within retainMs').toMatchObject({
        state: RecordStates.IN_PROGRESS,
        attempt: 1,
      });
      expect(await store.inspect(released)).toMatchObject({ state: RecordStates.RELEASED });

      await sleep(2 * shortMs);
      expect(await store.inspect(abandoned), 'an abandoned claim after lease + retainMs').toBe(
        undefined,
      );
      expect(await store.inspect(released), 'a released claim after its expiry').toBe(undefined);
      expect(await store.inspect(shrunk), 'renewed to a shorter lease').toMatchObject({
        state: RecordStates.IN_PROGRESS,
      });
      expect(await store.inspect(pushed), 'renewed to a longer lease').toMatchObject({
        state: RecordStates.IN_PROGRESS,
      });
      expect(await store.claim(env.claimRequest(pushed))).toMatchObject({
        status: 'in-progress',
        attempt: 1,
      });

      const fresh = expectClaimed(await store.claim(env.claimRequest(abandoned)));
      expect(fresh.attempt, 'a claim of an expired record').toBe(1);
      expect(fresh.previousError).toBeUndefined();
      // Downstream systems compare fencing tokens: an expired record must not restart them.
      expect(fresh.fencingToken).toBeGreaterThan(crashed.fencingToken);
      expect(await store.complete({ ...abandoned, token: crashed.token, ttlMs: LONG_MS })).toBe(
        'lease-lost',
      );
      const again = expectClaimed(await store.claim(env.claimRequest(released)));
      expect(again.attempt).toBe(1);
      expect(again.fencingToken).toBeGreaterThan(giving.fencingToken);
    },
  );

  suite.case(
    'S18',
    'FAILED retention: a failed record is remembered ttlMs after the failure, whatever its claim’s lease and retainMs; then absent, and a new claim is attempt 1 without previousError',
    async (env) => {
      const { shortMs, slackMs } = env.timing;
      const store = await env.store();
      const error = { name: 'Error', message: 'failed once' };

      // Claimed with long lease and retention: the failure's ttlMs alone decides.
      const forgotten = env.id('forgotten');
      const first = expectClaimed(await store.claim(env.claimRequest(forgotten)));
      expect(await store.fail({ ...forgotten, token: first.token, ttlMs: shortMs, error })).toBe(
        'ok',
      );
      const remembered = env.id('remembered');
      const other = expectClaimed(await store.claim(env.claimRequest(remembered)));
      expect(
        await store.fail({ ...remembered, token: other.token, ttlMs: 4 * shortMs, error }),
      ).toBe('ok');
      expect(await store.inspect(forgotten)).toMatchObject({ state: 'FAILED', attempt: 1 });

      await sleep(shortMs + slackMs);
      expect(await store.inspect(forgotten), 'a FAILED record after its ttlMs').toBe(undefined);
      const fresh = expectClaimed(await store.claim(env.claimRequest(forgotten)));
      expect(fresh.attempt, 'a claim of an expired FAILED record').toBe(1);
      expect(fresh.previousError, 'an expired record remembers no error').toBeUndefined();
      expect(fresh.fencingToken).toBeGreaterThan(first.fencingToken);
      expect(await store.inspect(forgotten)).not.toHaveProperty('lastError');

      // Within its ttlMs a FAILED record still counts: attempt 2, with the error.
      const retry = expectClaimed(await store.claim(env.claimRequest(remembered)));
      expect(retry).toMatchObject({ attempt: 2, previousError: error });
    },
  );
}
