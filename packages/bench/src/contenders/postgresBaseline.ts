import { CommandCounter } from '../commandCounter.js';
import { countedPool, quoted, tableFor } from './postgresPool.js';
import type { ContenderSetup, PostgresContender } from './types.js';

/**
 * The hand-written floor on PostgreSQL: what a careful developer writes with pg alone, on a
 * table of one row per id.
 *
 * Per processed message: `INSERT … ON CONFLICT DO NOTHING` that inserts (claim), handler,
 * `UPDATE … SET done = true` (complete). Per duplicate: the insert that inserts nothing. Like
 * the Redis baseline it cannot tell a duplicate from a message still in progress, and has no
 * lease, fencing, fingerprint, failure state or expiry.
 */
export async function postgresBaselineContender(setup: ContenderSetup): Promise<PostgresContender> {
  const sent = new CommandCounter();
  const table = tableFor(setup.namespace);
  const pool = countedPool(setup.postgresUrl, sent, table);
  const name = quoted(table);
  await pool.query(
    `CREATE TABLE ${name} (id text PRIMARY KEY, done boolean NOT NULL DEFAULT false)`,
  );
  const claim = `INSERT INTO ${name} (id) VALUES ($1) ON CONFLICT DO NOTHING`;
  const complete = `UPDATE ${name} SET done = true WHERE id = $1`;

  return {
    store: 'postgres',
    sent,
    table,
    async handle(message) {
      const claimed = await pool.query(claim, [message.requestId]);
      if (claimed.rowCount !== 1) return 'duplicate';
      setup.handler();
      await pool.query(complete, [message.requestId]);
      return 'processed';
    },
    async close() {
      await pool.query(`DROP TABLE IF EXISTS ${name}`);
      await pool.end();
    },
  };
}
