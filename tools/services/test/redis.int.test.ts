import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceUrls } from '@idemq/services';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('Redis', () => {
  let redis: Redis;
  const prefix = `idemq:smoke:${randomUUID()}`;

  beforeAll(() => {
    redis = new Redis(serviceUrls().redis, { lazyConnect: true, maxRetriesPerRequest: 1 });
    return redis.connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('stores a value with a TTL and forgets it when the TTL runs out', async () => {
    const key = `${prefix}:ttl`;
    expect(await redis.set(key, 'hello', 'PX', 300)).toBe('OK');
    expect(await redis.get(key)).toBe('hello');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);

    await sleep(400);
    expect(await redis.get(key)).toBeNull();
    expect(await redis.exists(key)).toBe(0);
  });

  it('SET NX EX claims a key once', async () => {
    const key = `${prefix}:claim`;
    expect(await redis.set(key, 'first', 'EX', 30, 'NX')).toBe('OK');
    expect(await redis.set(key, 'second', 'EX', 30, 'NX')).toBeNull();
    expect(await redis.get(key)).toBe('first');
    expect(await redis.ttl(key)).toBeGreaterThan(25);
    await redis.del(key);
  });
});
