import { runStoreConformance, runStoreModel } from '@idemq/conformance';
import { afterAll } from 'vitest';
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../src/index.js';
import { closeTestPool, freshTable, testPool } from './helpers.js';

/*
 * The store contract (S01–S23) and the store model against a real PostgreSQL, in plain and in
 * transactional mode (the store's own operations are the same; the mode only adds transactions).
 * The stores of one harness share a table, as processes on one database do (S19 races two).
 */

const pool = testPool(20);
afterAll(() => closeTestPool(pool));

function harness(name: string, options: Partial<PostgresStoreOptions> = {}) {
  const created: PostgresStore[] = [];
  let table: Promise<string> | undefined;
  return {
    name,
    sharedBackend: true,
    createStore: async () => {
      table ??= freshTable(pool);
      const store = postgresStore({ pool, table: await table, ...options });
      created.push(store);
      return store;
    },
    createUnreachableStore: async () =>
      postgresStore({
        connectionString: 'postgres://postgres@127.0.0.1:1/postgres',
        operationTimeoutMs: 500,
      }),
    countRoundTrips: () => created.reduce((sum, store) => sum + store.stats().roundTrips, 0),
  };
}

runStoreConformance(harness('postgres'));
runStoreConformance(harness('postgres (transactional mode)', { transactions: true }));
// Every call its own unnamed statement: the path behind a pooler without prepared statements.
runStoreConformance(
  harness('postgres (no coalescing, no prepared statements)', {
    coalesce: false,
    preparedStatements: false,
  }),
);

runStoreModel({
  name: 'postgres',
  createStore: async () => postgresStore({ pool, table: await freshTable(pool) }),
});

runStoreModel({
  name: 'postgres (no coalescing)',
  createStore: async () => postgresStore({ pool, table: await freshTable(pool), coalesce: false }),
});
