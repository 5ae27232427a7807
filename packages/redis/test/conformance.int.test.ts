import { runStoreConformance } from '@idemq/conformance';
import { type RedisStore, redisStore } from '../src/index.js';
import { clusterClient, uniquePrefix, urls } from './helpers.js';

/*
 * The store contract (S01–S21) against a real standalone Redis (also with its local cache of
 * duplicates) and a real 3-master Cluster.
 * The stores of one harness share a key prefix, as processes on one Redis do (S19 races two of
 * them); the cases keep apart by scope. Round trips are the stores' own counters (on Cluster a
 * batch sends one script call per slot, all at once: one round trip of latency).
 */

function harness(name: string, create: (prefix: string) => RedisStore) {
  const created: RedisStore[] = [];
  const prefix = uniquePrefix();
  return {
    name,
    sharedBackend: true,
    createStore: async () => {
      const store = create(prefix);
      await store.ready();
      created.push(store);
      return store;
    },
    createUnreachableStore: async () =>
      redisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 500 }),
    countRoundTrips: () => created.reduce((sum, store) => sum + store.stats().roundTrips, 0),
  };
}

runStoreConformance(
  harness('redis (standalone)', (prefix) => redisStore({ url: urls.redis, prefix })),
);

// The local cache answers duplicates without Redis: it must keep the same contract.
runStoreConformance(
  harness('redis (standalone, local cache)', (prefix) =>
    redisStore({ url: urls.redis, prefix, localCache: { maxEntries: 1_000 } }),
  ),
);

runStoreConformance(
  harness('redis (cluster)', (prefix) => {
    const client = clusterClient();
    const store = redisStore({ client, prefix });
    // The suite closes the store; the Cluster client is ours to close with it.
    const close = store.close.bind(store);
    store.close = async () => {
      await close();
      await client.quit();
    };
    return store;
  }),
);
