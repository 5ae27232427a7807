import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaSql } from './schema.js';

describe('sql/schema.sql', () => {
  it('is what migrate() runs for the default table, after its header comment', () => {
    const file = readFileSync(new URL('../sql/schema.sql', import.meta.url), 'utf8');
    expect(file.replace(/^(--.*\n)+/, '')).toBe(schemaSql());
  });

  it('names the table and its index after a schema-qualified table', () => {
    const sql = schemaSql({ table: 'billing.inbox' });
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "billing"."inbox"');
    expect(sql).toContain('CREATE INDEX IF NOT EXISTS "inbox_expires_at" ON "billing"."inbox"');
  });
});
