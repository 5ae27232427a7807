import { Cluster as Cluster5, Redis as Redis5 } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisClient, redisStore } from '../src/index.js';
import { uniquePrefix, urls } from './helpers.js';

/**
 * The peer range says which ioredis majors a user may bring: each client below is one of them
 * (ioredis 6 talks RESP3 by default, and may map replies as RESP3 objects). The store's types
 * come from the ioredis it is installed beside, here 5, hence the casts for 6.
 */
const STANDALONE: Record<string, () => RedisClient> = {
  'ioredis 5': () => new Redis5(urls.redis, { maxRetriesPerRequest: 1 }),
  'ioredis 6 (RESP3, its default)': () =>
    new Redis6(urls.redis, { maxRetriesPerRequest: 1 }) as unknown as RedisClient,
  'ioredis 6 with RESP2': () =>
    new Redis6(urls.redis, { maxRetriesPerRequest: 1, protocol: 2 }) as unknown as RedisClient,
  'ioredis 6 with RESP3 reply mapping': () =>
    new Redis6(urls.redis, {
      maxRetriesPerRequest: 1,
      replyMapping: 'resp3',
    }) as unknown as RedisClient,
};

const CLUSTER: Record<string, () => RedisClient> = {
  'ioredis 5': () =>
    new Cluster5(urls.redisClusterNodes, { redisOptions: { maxRetriesPerRequest: 1 } }),
  'ioredis 6': () =>
    new Cluster6(urls.redisClusterNodes, {
      redisOptions: { maxRetriesPerRequest: 1 },
    }) as unknown as RedisClient,
};

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };
const clients: RedisClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.quit().catch(() => client.disconnect());
});

/** The self-test, then claim → complete (with a result) → duplicate, and a fenced stranger. */
async function roundTrip(client: RedisClient, expectCluster: boolean): Promise<void> {
  clients.push(client);
  client.on('error', () => {});
  const store = redisStore({ client, prefix: uniquePrefix() });
  const report = await store.ready();
  expect(report.cluster).toBe(expectCluster);
  expect(report.probeTtlMs).toBeGreaterThan(0);

  const id = { scope: 'majors', requestId: 'order-1' };
  const claimed = await store.claim({ ...id, ...LEASE, fingerprint: 'f1' });
  if (claimed.status !== 'claimed') throw new Error(`claim answered ${claimed.status}`);
  expect(claimed.attempt).toBe(1);
  expect(await store.complete({ ...id, token: 'not-the-owner', ttlMs: 60_000 })).toBe('lease-lost');
  expect(
    await store.complete({ ...id, token: claimed.token, ttlMs: 60_000, result: '{"n":1}' }),
  ).toBe('ok');
  const again = await store.claim({ ...id, ...LEASE, fingerprint: 'f1' });
  expect(again).toMatchObject({ status: 'duplicate', result: '{"n":1}' });
  expect((await store.claim({ ...id, ...LEASE, fingerprint: 'f2' })).status).toBe('key-reuse');
  expect((await store.inspect(id))?.state).toBe('COMPLETED');
  await store.close();
}

describe.each(Object.entries(STANDALONE))('redisStore with a standalone %s client', (_, make) => {
  it('passes its self-test and runs claim, complete and duplicate', async () => {
    await roundTrip(make(), false);
  });
});

describe.each(Object.entries(CLUSTER))('redisStore with a %s Cluster client', (_, make) => {
  it('passes its self-test and runs claim, complete and duplicate', async () => {
    await roundTrip(make(), true);
  });
});
