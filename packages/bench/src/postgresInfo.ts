import pg from 'pg';
import { BENCH_APPLICATION, quoted } from './contenders/postgresPool.js';
import { postmasterOf } from './postgresProcesses.js';

/** A connection of the bench's own (facts, gauges, clean-up), failing within `timeoutMs`. */
export async function connectPostgres(url: string, timeoutMs = 5_000): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    application_name: BENCH_APPLICATION,
  });
  // A server that goes away must fail the next query, not end the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** The server's version, and its postmaster's process id when it runs on this machine. */
export async function postgresFacts(
  client: pg.Client,
): Promise<{ version: string; postmaster?: number }> {
  const { rows } = await client.query<{ version: string; pid: number }>(
    `SELECT current_setting('server_version') AS version, pg_backend_pid() AS pid`,
  );
  const row = rows[0];
  const postmaster = row ? postmasterOf(row.pid) : undefined;
  return { version: row?.version ?? 'unknown', ...(postmaster ? { postmaster } : {}) };
}

/** The server's clock now, as text a later query can compare with. */
export async function serverNow(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ now: string }>('SELECT clock_timestamp()::text AS now');
  return rows[0]?.now ?? '';
}

/** Heap, indexes and TOAST of `table`, bytes (dead row versions included until vacuumed). */
export async function tableBytes(client: pg.Client, table: string): Promise<number> {
  const { rows } = await client.query<{ bytes: number }>(
    'SELECT pg_total_relation_size($1::regclass)::float8 AS bytes',
    [quoted(table)],
  );
  return rows[0]?.bytes ?? Number.NaN;
}

/**
 * Client connections, other than this one and those named `ownApplication`, that are running a
 * statement or have changed state since `since` (server time): other clients using a shared
 * server during a phase.
 */
export async function otherBusyClients(
  client: pg.Client,
  ownApplication: string,
  since: string,
): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND application_name <> $1 AND (state = 'active' OR state_change >= $2::timestamptz)`,
    [ownApplication, since],
  );
  return rows[0]?.n ?? 0;
}

/** Empties `table` (TRUNCATE: the next round starts from an empty file); resolves its rows. */
export async function truncateTable(client: pg.Client, table: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${quoted(table)}`,
  );
  await client.query(`TRUNCATE ${quoted(table)}`);
  return rows[0]?.n ?? 0;
}

/** Drops every table of the current schema whose name starts with `prefix`; resolves how many. */
export async function dropTables(client: pg.Client, prefix: string): Promise<number> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables
WHERE schemaname = current_schema() AND left(tablename, length($1)) = $1`,
    [prefix],
  );
  for (const { name } of rows) await client.query(`DROP TABLE IF EXISTS ${quoted(name)}`);
  return rows.length;
}
