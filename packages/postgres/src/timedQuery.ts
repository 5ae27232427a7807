import { createHash } from 'node:crypto';
import type pg from 'pg';

const names = new Map<string, string>();

/**
 * A query that `pg` itself gives up on after `timeoutMs` (its `query_timeout`, untyped); with
 * `prepared`, a named statement, parsed and planned once per connection (the name is the text's
 * hash, so two tables never share one).
 */
export function timedQuery(
  text: string,
  values: unknown[] | undefined,
  timeoutMs: number,
  prepared = false,
) {
  const config: pg.QueryConfig = values === undefined ? { text } : { text, values };
  if (prepared) config.name = statementName(text);
  return Object.assign(config, { query_timeout: timeoutMs });
}

function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `idemq_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
}
