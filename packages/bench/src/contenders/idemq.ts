import { createIdempotency } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { Redis } from 'ioredis';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import { idemqHandle } from './idemqRun.js';
import type { ContenderSetup, RedisContender } from './types.js';

/**
 * idemq as users get it: `createIdempotency` over `redisStore({ client })`, defaults throughout
 * (lease 40 s with heartbeat, COMPLETED kept 24 h, coalescing on). The payload is passed, so
 * every claim also stores a SHA-256 fingerprint. With `localCache`, an id Redis answered
 * `duplicate` for is remembered and its later duplicates are answered from memory (in this
 * workload each duplicate comes once: the row shows what the cache costs when it never hits).
 *
 * Per processed message: EVALSHA claim, handler, EVALSHA complete (concurrent operations share
 * one EVALSHA per lane). Per duplicate: EVALSHA claim (answers `duplicate`), or nothing on a
 * local-cache hit.
 */
export async function idemqContender(
  setup: ContenderSetup,
  options: { localCache: boolean },
): Promise<RedisContender> {
  const sent = new CommandCounter();
  const client = countIoredis(new Redis(setup.redisUrl, { maxRetriesPerRequest: 1 }), sent);
  const prefix = `${setup.namespace}:idemq`;
  const store = redisStore({
    client,
    prefix,
    // The cache's defaults: it holds repeated duplicates, not every id of the run.
    ...(options.localCache ? { localCache: {} } : {}),
  });
  // Load the scripts and prove the server fits, as a user's startup would.
  await store.ready();
  const idem = createIdempotency({ store, scope: 'bench' });

  return {
    store: 'redis',
    sent,
    keyPatterns: [`${globEscape(prefix)}:*`],
    handle: idemqHandle(idem, setup),
    cacheHits: () => store.stats().cacheHits,
    async close() {
      await store.close();
      await client.quit();
    },
  };
}
