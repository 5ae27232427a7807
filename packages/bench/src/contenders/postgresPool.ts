import pg from 'pg';
import type { CommandCounter } from '../commandCounter.js';

/** Connections in each PostgreSQL contender's pool: the same for idemq and the baseline. */
export const POSTGRES_POOL_SIZE = 16;

/** `application_name` of the bench's own connections that are no contender's. */
export const BENCH_APPLICATION = 'idemq-bench';

/**
 * The pool every PostgreSQL contender gets, with each statement counted where it leaves the
 * process (`pool.query`, which both the store and the baseline send through). Its connections
 * are named after the contender's `table`, so a gauge tells them from other clients. Idle
 * connections are kept: pg closes them after 10 s by default, and a contender waiting for its
 * turn would then pay the reconnects in its next round.
 */
export function countedPool(url: string, counter: CommandCounter, table: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: POSTGRES_POOL_SIZE,
    idleTimeoutMillis: 0,
    application_name: table,
  });
  // An idle connection that dies must not end the process: the next statement fails the round.
  pool.on('error', () => {});
  const query = pool.query;
  pool.query = function (this: pg.Pool, ...args: unknown[]) {
    counter.add(statementKind(args[0]));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pool.query;
  return pool;
}

/**
 * A statement's name for the command tables: its first keyword, and for a `WITH` the statement
 * that writes (`with…insert`), so the idemq claim reads as the upsert it is.
 */
export function statementKind(query: unknown): string {
  const text = typeof query === 'string' ? query : (query as { text?: unknown })?.text;
  if (typeof text !== 'string') return 'query';
  const first = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase() ?? 'query';
  if (first !== 'with') return first;
  const writes = /\b(insert|update|delete)\b/i.exec(text)?.[1]?.toLowerCase();
  return writes ? `with…${writes}` : first;
}

/**
 * The table of the contender whose ids live under `namespace` (`idemq-bench:ab12:idemq-postgres:c64`
 * → `idemq_bench_ab12_idemq_postgres_c64`): a plain identifier, unique to the run, contender and
 * concurrency, that `tablesOfRun` finds again.
 */
export function tableFor(namespace: string): string {
  const name = namespace.toLowerCase().replace(/[^a-z0-9]+/g, '_');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`no table name fits the namespace ${JSON.stringify(namespace)}`);
  }
  return name;
}

/** `name` as a quoted SQL identifier (names from `tableFor` only: no quote to escape). */
export function quoted(name: string): string {
  return `"${name}"`;
}
