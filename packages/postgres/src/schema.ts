import { DEFAULT_TABLE, indexName, quotedTable } from './tableName.js';

/**
 * The store's table and its index, as SQL to run once before the store is used (by `migrate()`,
 * or by your own migration tool: `sql/schema.sql` holds the same for the default table).
 * Idempotent: `IF NOT EXISTS` throughout.
 */
export function schemaSql(options: { table?: string } = {}): string {
  const table = options.table ?? DEFAULT_TABLE;
  const quoted = quotedTable(table, 'schemaSql');
  return `CREATE TABLE IF NOT EXISTS ${quoted} (
  scope            text        NOT NULL,
  request_id       text        NOT NULL,
  -- I in progress, C completed, F failed, R released
  state            "char"      NOT NULL CHECK (state IN ('I', 'C', 'F', 'R')),
  attempt          integer     NOT NULL,
  fencing_token    bigint      NOT NULL,
  -- the claim's owner token; NULL once the record has ended (C, F, R)
  owner_token      text,
  fingerprint      text,
  lease_expires_at timestamptz,
  retain_ms        double precision,
  completed_at     timestamptz,
  -- every statement treats a record past this time as absent; the sweeper deletes it
  expires_at       timestamptz NOT NULL,
  -- JSON of the last failure: {"name","message","code"?}
  last_error       text,
  -- UTF-8 of the stored result (bytea: a result may hold any character, NUL too)
  result           bytea,
  result_omitted   text,
  PRIMARY KEY (scope, request_id)
);
CREATE INDEX IF NOT EXISTS ${indexName(table, 'expires_at')} ON ${quoted} (expires_at);
`;
}

/**
 * Creates the store's table and index when missing. Call it from your deployment or migration
 * step, never implicitly: the store itself never changes the schema.
 */
export async function migrate(
  db: { query(text: string): Promise<unknown> },
  options: { table?: string } = {},
): Promise<void> {
  await db.query(schemaSql(options));
}
