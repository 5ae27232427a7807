import type pg from 'pg';

/** A query that `pg` itself gives up on after `timeoutMs` (its `query_timeout`, untyped). */
export function timedQuery(text: string, values: unknown[] | undefined, timeoutMs: number) {
  const config: pg.QueryConfig = values === undefined ? { text } : { text, values };
  return Object.assign(config, { query_timeout: timeoutMs });
}
