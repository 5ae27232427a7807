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

/** A fresh table, migrated, so tests never see each other's records. */
export async function freshTable(pool: pg.Pool): Promise<string> {
  const table = `idemq_t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await migrate(pool, { table });
  return table;
}
