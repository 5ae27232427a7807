import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisStore, redisStore } from '../src/index.js';
import { clusterClient, uniquePrefix } from './helpers.js';

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };

describe('redisStore on a 3-master Redis Cluster', () => {
  let cluster: Cluster;
  let store: RedisStore;
  const scope = 'cluster';

  beforeAll(async () => {
    cluster = clusterClient();
    store = redisStore({ client: cluster, prefix: uniquePrefix() });
    const report = await store.ready();
    expect(report.cluster).toBe(true);
  });
  afterAll(async () => {
    await store.close();
    await cluster.quit();
  });

  it('refuses durability on a Cluster client rather than ignore it', () => {
    expect(() =>
      redisStore({ client: cluster, durability: { replicas: 1, timeoutMs: 100 } }),
    ).toThrow(/durability is for standalone and Sentinel clients/);
  });

  it('runs the whole record life cycle on records spread over every master', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `order-${i}`);
    const claims = await store.claimMany(ids.map((requestId) => ({ scope, requestId, ...LEASE })));
    expect(claims.every((c) => c.status === 'claimed')).toBe(true);
    const completions = await Promise.all(
      claims.map((claim, i) =>
        claim.status === 'claimed'
          ? store.complete({
              scope,
              requestId: ids[i] as string,
              token: claim.token,
              ttlMs: 60_000,
            })
          : 'not-claimed',
      ),
    );
    expect(completions.every((c) => c === 'ok')).toBe(true);
    const again = await store.claimMany(ids.map((requestId) => ({ scope, requestId, ...LEASE })));
    expect(again.every((c) => c.status === 'duplicate')).toBe(true);
  });

  it('never raises CROSSSLOT for ids with braces of their own', async () => {
    const ids = ['{a}', '{b}', '}{', '{}{x}', '{{}}', 'plain'];
    const outcomes = await store.claimMany(
      ids.map((requestId) => ({ scope, requestId, ...LEASE })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'claimed'));
  });

  it('keeps 50 concurrent claims of one id to exactly one winner', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => store.claim({ scope, requestId: 'contended', ...LEASE })),
    );
    expect(outcomes.filter((o) => o.status === 'claimed')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'in-progress')).toHaveLength(49);
  });
});
