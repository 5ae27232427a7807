import { ErrorCodes, type IdemqError } from '@idemq/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../src/index.js';
import { type RedisProcess, redisProcess } from './redisProcess.js';

/*
 * Redis stopped and restarted under a live store: a private redis-server on its own port (never
 * the shared one).
 */

const LEASE = { leaseMs: 10_000, retainMs: 10_000 };

describe('redisStore across a Redis restart', () => {
  let server: RedisProcess;
  const start = () => server.start();
  const stop = () => server.stop();

  beforeAll(async () => {
    server = await redisProcess();
    await start();
  });
  afterAll(async () => {
    await server.destroy();
  });

  it('fails with typed retriable errors while down and works again after', async () => {
    const store = redisStore({ url: server.url, commandTimeoutMs: 500 });
    await store.ready();
    const scope = 'restart';
    const first = await store.claim({ scope, requestId: 'before', ...LEASE });
    if (first.status !== 'claimed') throw new Error('expected a claim');
    expect(
      await store.complete({ scope, requestId: 'before', token: first.token, ttlMs: 60_000 }),
    ).toBe('ok');
    const inFlight = await store.claim({ scope, requestId: 'in-flight', ...LEASE });
    if (inFlight.status !== 'claimed') throw new Error('expected a claim');

    await stop();
    const errors = await Promise.all(
      [
        store.claim({ scope, requestId: 'during', ...LEASE }),
        store.complete({ scope, requestId: 'in-flight', token: inFlight.token, ttlMs: 60_000 }),
        store.renew({ scope, requestId: 'in-flight', token: inFlight.token, leaseMs: 10_000 }),
      ].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e as IdemqError,
        ),
      ),
    );
    for (const error of errors) {
      expect(error?.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
      expect(error?.retriable).toBe(true);
    }

    await start();
    // The client reconnects by itself; the first operations may still race the reconnect.
    let duplicate: Awaited<ReturnType<typeof store.claim>> | undefined;
    for (let tries = 0; tries < 40 && !duplicate; tries++) {
      duplicate = await store.claim({ scope, requestId: 'before', ...LEASE }).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        return undefined;
      });
    }
    // Nothing was lost or half-written: the completed id is still a duplicate, the in-flight
    // claim is still owned by its token (the failed complete changed nothing).
    expect(duplicate?.status).toBe('duplicate');
    expect((await store.inspect({ scope, requestId: 'in-flight' }))?.state).toBe('IN_PROGRESS');
    expect(
      await store.complete({ scope, requestId: 'in-flight', token: inFlight.token, ttlMs: 60_000 }),
    ).toBe('ok');
    expect((await store.claim({ scope, requestId: 'during', ...LEASE })).status).toBe('claimed');
    await store.close();
  });
});
