import { createIdempotency } from '@idemq/core';
import { migrate, postgresStore } from '@idemq/postgres';
import { CommandCounter } from '../commandCounter.js';
import { idemqHandle } from './idemqRun.js';
import { countedPool, quoted, tableFor } from './postgresPool.js';
import type { ContenderSetup, PostgresContender } from './types.js';

/**
 * idemq on PostgreSQL as users get it: `createIdempotency` over `postgresStore({ pool, table })`
 * on a table of its own made by `migrate()`, defaults throughout (lease 40 s with heartbeat,
 * COMPLETED kept 24 h, no transactions), the payload passed so each claim stores a fingerprint.
 *
 * Per processed message: the claim statement (`WITH … INSERT … ON CONFLICT DO UPDATE … WHERE`
 * takeover, plus a read of the rows it left alone), handler, the completion `UPDATE`. Per
 * duplicate: the claim statement, answering `duplicate`.
 */
export async function idemqPostgresContender(setup: ContenderSetup): Promise<PostgresContender> {
  const sent = new CommandCounter();
  const table = tableFor(setup.namespace);
  const pool = countedPool(setup.postgresUrl, sent, table);
  await migrate(pool, { table });
  const store = postgresStore({ pool, table });
  // Prove the table answers, as a user's startup would.
  await store.ready();
  const idem = createIdempotency({ store, scope: 'bench' });

  return {
    store: 'postgres',
    sent,
    table,
    libraryRoundTrips: () => store.stats().roundTrips,
    handle: idemqHandle(idem, setup),
    async close() {
      await store.close();
      await pool.query(`DROP TABLE IF EXISTS ${quoted(table)}`);
      await pool.end();
    },
  };
}
