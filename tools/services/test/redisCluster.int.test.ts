import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('Redis Cluster', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = new Cluster(serviceUrls().redisClusterNodes, { lazyConnect: true });
    await cluster.connect();
  });
  afterAll(async () => {
    await cluster.quit();
  });

  it('has three masters that cover every slot', async () => {
    const info = await cluster.cluster('INFO');
    expect(info).toContain('cluster_state:ok');
    expect(info).toContain('cluster_slots_assigned:16384');
    expect(cluster.nodes('master')).toHaveLength(3);
  });

  it('routes keys to every master and reads them back with their TTL', async () => {
    const prefix = `idemq:smoke:${randomUUID()}`;
    const keys = Array.from({ length: 30 }, (_, i) => `${prefix}:${i}`);
    for (const key of keys) expect(await cluster.set(key, key, 'EX', 60)).toBe('OK');
    for (const key of keys) expect(await cluster.get(key)).toBe(key);
    expect(await cluster.ttl(keys[0] ?? '')).toBeGreaterThan(50);

    // 30 random keys land on all three masters (each owns a third of the slots).
    const owners = new Set<string>();
    for (const key of keys) {
      const slot = Number(await cluster.cluster('KEYSLOT', key));
      owners.add(cluster.slots[slot]?.[0] ?? 'unassigned');
    }
    expect([...owners].sort()).toEqual(
      serviceUrls()
        .redisClusterNodes.map(({ host, port }) => `${host}:${port}`)
        .sort(),
    );

    // Same hash tag, same slot: multi-key commands work.
    const tagged = [`{${prefix}}:a`, `{${prefix}}:b`];
    await cluster.mset(tagged[0] ?? '', '1', tagged[1] ?? '', '2');
    expect(await cluster.mget(...tagged)).toEqual(['1', '2']);
    for (const key of [...keys, ...tagged]) await cluster.del(key);
  });
});
