import { recordKey } from '@idemq/core/adapter';
import { describe, expect, it } from 'vitest';
import { CompletedCache } from './completedCache.js';

const DAY = 86_400_000;
const done = (completedAt = 1) => ({ completedAt });
const cached = (cache: CompletedCache, keys: string[]) =>
  keys.filter((key) => cache.get(key, undefined) !== undefined);

describe('CompletedCache', () => {
  it('holds the last maxEntries ids remembered, evicting the oldest first', () => {
    const cache = new CompletedCache(3, DAY);
    for (const key of ['k0', 'k1', 'k2', 'k3', 'k4']) cache.remember(key, done(), DAY);
    expect(cached(cache, ['k0', 'k1', 'k2', 'k3', 'k4'])).toEqual(['k2', 'k3', 'k4']);
    expect(cache.size).toBe(3);
  });

  it('gives an id remembered again the newest place', () => {
    const cache = new CompletedCache(3, DAY);
    for (const key of ['a', 'b', 'c', 'a', 'd']) cache.remember(key, done(), DAY);
    expect(cached(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    expect(cache.size).toBe(3);
  });

  it('answers the latest completion remembered for an id', () => {
    const cache = new CompletedCache(3, DAY);
    cache.remember('a', done(1), DAY);
    cache.remember('a', { completedAt: 2, result: 'r' }, DAY);
    expect(cache.get('a', undefined)).toMatchObject({ completedAt: 2, result: 'r' });
  });

  it('does not evict an id that expired, was dropped and came back, from its old place', () => {
    const cache = new CompletedCache(3, DAY);
    cache.remember('a', done(), 0); // expires at once: the record's TTL is shorter than ttlMs
    expect(cache.get('a', undefined)).toBeUndefined();
    cache.remember('b', done(), DAY);
    cache.remember('a', done(), DAY);
    cache.remember('c', done(), DAY); // takes a's first slot: that slot no longer holds a
    expect(cached(cache, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('misses once ttlMs has passed, even when the record lives longer', async () => {
    const cache = new CompletedCache(3, 5);
    cache.remember('a', done(), DAY);
    expect(cache.get('a', undefined)).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cache.get('a', undefined)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('misses for a different payload fingerprint, so Redis decides key reuse', () => {
    const cache = new CompletedCache(3, DAY);
    cache.remember('a', { completedAt: 1, fingerprint: 'f1' }, DAY);
    cache.remember('b', done(), DAY);
    expect(cache.get('a', 'f2')).toBeUndefined();
    expect(cache.get('a', 'f1')).toBeDefined();
    expect(cache.get('a', undefined)).toBeDefined();
    expect(cache.get('b', 'f1')).toBeDefined();
    expect(cache.hits).toBe(3);
  });

  it('stays at maxEntries and keeps exactly the newest over many evictions', () => {
    const cache = new CompletedCache(1_000, DAY);
    const keys = Array.from({ length: 100_000 }, (_, i) => recordKey('idemq', 's', `k${i}`));
    for (const key of keys) cache.remember(key, done(), DAY);
    expect(cache.size).toBe(1_000);
    expect(cached(cache, keys)).toEqual(keys.slice(-1_000));
  });
});
