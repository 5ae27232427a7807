import { runStoreModel } from '@idemq/conformance';
import { redisStore } from '../src/index.js';
import { clusterClient, uniquePrefix, urls } from './helpers.js';

/*
 * The store model (random interleavings checked against the contract) on a real standalone
 * Redis and a real Cluster, in real time: short leases, few runs.
 */

runStoreModel({
  name: 'redis (standalone)',
  createStore: async () => {
    const store = redisStore({ url: urls.redis, prefix: uniquePrefix() });
    await store.ready();
    return store;
  },
});

runStoreModel(
  {
    name: 'redis (cluster)',
    createStore: async () => {
      const client = clusterClient();
      const store = redisStore({ client, prefix: uniquePrefix() });
      await store.ready();
      // The model closes the store; the Cluster client is ours to close with it.
      const close = store.close.bind(store);
      store.close = async () => {
        await close();
        await client.quit();
      };
      return store;
    },
  },
  { numRuns: 12 },
);
