import { recordKey } from '@idemq/core/adapter';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RedisStore, redisStore } from '../src/index.js';
import { standaloneClient, uniquePrefix } from './helpers.js';

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };
const DAY_MS = 86_400_000;
const scope = 'billing';

describe('redisStore record layout', () => {
  let client: Redis;
  let store: RedisStore;
  let prefix: string;
  const keyOf = (requestId: string) => recordKey(prefix, scope, requestId);

  beforeEach(async () => {
    client = standaloneClient();
    prefix = uniquePrefix();
    store = redisStore({ client, prefix });
    await store.ready();
  });
  afterEach(async () => {
    await store.close();
    await client.quit();
  });

  it('keeps only what an ended record needs: one-letter states, no owner, lease or retention', async () => {
    const claimed = await store.claim({ scope, requestId: 'done', ...LEASE, fingerprint: 'fp' });
    if (claimed.status !== 'claimed') throw new Error(claimed.status);
    expect(await client.hgetall(keyOf('done'))).toMatchObject({ s: 'I', o: claimed.token });
    await store.complete({ scope, requestId: 'done', token: claimed.token, ttlMs: DAY_MS });
    const completed = await client.hgetall(keyOf('done'));
    expect(Object.keys(completed).sort()).toEqual(['a', 'c', 'f', 'p', 's']);
    expect(completed.s).toBe('C');

    const failing = await store.claim({ scope, requestId: 'failed', ...LEASE });
    if (failing.status !== 'claimed') throw new Error(failing.status);
    const error = { name: 'Error', message: 'no' };
    await store.fail({ scope, requestId: 'failed', token: failing.token, ttlMs: DAY_MS, error });
    expect(Object.keys(await client.hgetall(keyOf('failed'))).sort()).toEqual([
      'a',
      'em',
      'en',
      'f',
      's',
    ]);

    const giving = await store.claim({ scope, requestId: 'released', ...LEASE });
    if (giving.status !== 'claimed') throw new Error(giving.status);
    await store.release({ scope, requestId: 'released', token: giving.token });
    expect(await client.hgetall(keyOf('released'))).toMatchObject({ s: 'R' });
    expect(await client.hgetall(keyOf('released'))).not.toHaveProperty('r');
  });

  it('reads records written with spelled-out states by earlier versions, in every state', async () => {
    const now = Date.now();
    const write = async (requestId: string, fields: Record<string, string>) => {
      await client.hset(keyOf(requestId), fields);
      await client.pexpire(keyOf(requestId), DAY_MS);
    };
    await write('completed', { s: 'COMPLETED', a: '1', f: '7', r: '5000', c: String(now), v: 'r' });
    await write('running', {
      s: 'IN_PROGRESS',
      a: '1',
      f: '8',
      o: 'old-owner',
      l: String(now + 60_000),
      r: '5000',
    });
    await write('failed', { s: 'FAILED', a: '2', f: '9', r: '5000', en: 'Error', em: 'boom' });
    await write('released', { s: 'RELEASED', a: '3', f: '10', r: '5000' });

    expect(await store.inspect({ scope, requestId: 'completed' })).toMatchObject({
      state: 'COMPLETED',
      result: 'r',
    });
    expect(await store.claim({ scope, requestId: 'completed', ...LEASE })).toMatchObject({
      status: 'duplicate',
      result: 'r',
      completedAt: now,
    });
    expect(await store.claim({ scope, requestId: 'running', ...LEASE })).toMatchObject({
      status: 'in-progress',
      attempt: 1,
    });
    // The earlier owner still owns its record and completes it.
    const running = { scope, requestId: 'running', token: 'old-owner' };
    expect(await store.renew({ ...running, leaseMs: 60_000 })).toBe('ok');
    expect(await store.complete({ ...running, ttlMs: DAY_MS })).toBe('ok');
    expect(await store.inspect(running)).toMatchObject({ state: 'COMPLETED', attempt: 1 });
    expect(await store.claim({ scope, requestId: 'failed', ...LEASE })).toMatchObject({
      status: 'claimed',
      attempt: 3,
      previousError: { name: 'Error', message: 'boom' },
    });
    expect(await store.claim({ scope, requestId: 'released', ...LEASE })).toMatchObject({
      status: 'claimed',
      attempt: 3,
    });
  });
});
