import { OptionsCheck } from '@idemq/core/adapter';

/** Table name used when none is given. */
export const DEFAULT_TABLE = 'idemq_records';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The table, `name` or `schema.name`, as a quoted SQL identifier. Only plain identifiers are
 * accepted: the name is the one part of a statement that cannot be a parameter.
 */
export function quotedTable(table: string, caller: string): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  new OptionsCheck(caller)
    .expect(
      parts.length >= 1 && parts.length <= 2 && parts.every((part) => IDENTIFIER.test(part)),
      `table must be "name" or "schema.name", each of letters, digits and _ (got ${JSON.stringify(table)})`,
    )
    .done();
  return parts.map((part) => `"${part}"`).join('.');
}

/** An index name derived from the table's own name (`schema.t` → `t_expires_at`). */
export function indexName(table: string, suffix: string): string {
  const name = table.split('.').at(-1) ?? table;
  return `"${name.slice(0, 63 - suffix.length - 1)}_${suffix}"`;
}
