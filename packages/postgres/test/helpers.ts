import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import pg from 'pg';
import { migrate } from '../src/index.js';

export const postgresUrl = serviceUrls().postgres;

/** A pool on the test server; the caller ends it. */
export function testPool(max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: postgresUrl, max });
  pool.on('error', () => {});
  return pool;
}

/** Tables this test file made, dropped by `closeTestPool`. */
const madeTables: string[] = [];

/** A fresh table, migrated, so tests never see each other's records. */
export async function freshTable(pool: pg.Pool): Promise<string> {
  const table = `idemq_t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  madeTables.push(table);
  await migrate(pool, { table });
  return table;
}

/** A fresh table of the test's own (a ledger), `columns` as in CREATE TABLE. */
export async function scratchTable(
  pool: pg.Pool,
  prefix: string,
  columns: string,
): Promise<string> {
  const table = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  madeTables.push(table);
  await pool.query(`CREATE TABLE ${table} (${columns})`);
  return table;
}

/** Drops the tables the file made (the server is shared), then ends the pool. */
export async function closeTestPool(pool: pg.Pool): Promise<void> {
  for (const table of madeTables.splice(0)) await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
}
