import { describe, expect, it } from 'vitest';
import { statementKind, tableFor } from './postgresPool.js';

describe('PostgreSQL contenders', () => {
  it('names a statement by its first keyword, a WITH by the statement that writes', () => {
    expect(statementKind('INSERT INTO t (id) VALUES ($1)')).toBe('insert');
    expect(statementKind({ text: '  UPDATE t SET done = true WHERE id = $1' })).toBe('update');
    expect(
      statementKind({ text: 'WITH q AS (SELECT 1), c AS (INSERT INTO t SELECT 1) SELECT 1' }),
    ).toBe('with…insert');
    expect(statementKind({ name: 'no text' })).toBe('query');
  });

  it('gives each contender a table named after its namespace, found again by the run prefix', () => {
    expect(tableFor('idemq-bench:ab12cd34:idemq-postgres:c64')).toBe(
      'idemq_bench_ab12cd34_idemq_postgres_c64',
    );
    expect(() => tableFor(`idemq-bench:${'x'.repeat(80)}`)).toThrow(/no table name/);
  });
});
