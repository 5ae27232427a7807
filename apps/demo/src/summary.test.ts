import { describe, expect, it } from 'vitest';
import type { RunFigures } from './scenario.js';
import { formatJson, formatSummary, violations } from './summary.js';

const clean: RunFigures = {
  transport: 'memory',
  store: 'memory',
  seed: 1,
  consumers: 4,
  sent: 125,
  uniqueIds: 100,
  concurrentDuplicates: 13,
  lateDuplicates: 12,
  delivered: 140,
  handlerRuns: 110,
  completed: 99,
  duplicatesSkipped: 25,
  inProgressRedeliveries: 5,
  retries: 10,
  deadLettered: 1,
  deadLetterMessages: 1,
  poison: 1,
  processedTwice: 0,
  lost: 0,
  completedAndDeadLettered: 0,
  unexpectedDeadLetters: 0,
  unsettledCopies: 0,
  leaseLost: 0,
  storeErrors: 0,
  errors: 0,
  timedOut: false,
  interrupted: false,
  elapsedMs: 1234,
  samples: { processedTwice: [], lost: [], errors: [] },
};

describe('summary', () => {
  it('passes a clean run', () => {
    expect(violations(clean)).toEqual([]);
    expect(formatSummary(clean)).toMatch(/^OK: /m);
    expect(JSON.parse(formatJson(clean))).toMatchObject({ ok: true, violations: [] });
  });

  it('fails a run with a payment processed twice, naming the id', () => {
    const figures = {
      ...clean,
      processedTwice: 1,
      samples: { ...clean.samples, processedTwice: ['0190-dup'] },
    };
    expect(violations(figures)).toEqual([
      '1 payment(s) charged or completed more than once (e.g. 0190-dup)',
    ]);
    expect(formatSummary(figures)).toMatch(/│ processed twice +│ +1 │ must be 0: FAILED/);
    expect(JSON.parse(formatJson(figures))).toMatchObject({ ok: false });
  });

  describe('with the ledger in PostgreSQL', () => {
    const database = {
      table: 'idemq_demo_x.ledger',
      rows: 99,
      distinctPayments: 99,
      inserted: 112,
      rolledBack: 13,
      failedAfterInsert: 10,
      connectionsKilled: 3,
      mismatched: 0,
    };

    it('shows the counts and passes one row per completed payment', () => {
      const figures = { ...clean, store: 'postgres', database };
      expect(violations(figures)).toEqual([]);
      const text = formatSummary(figures);
      expect(text).toMatch(/^ledger: idemq_demo_x\.ledger, written in each run's transaction/m);
      expect(text).toMatch(/│ ledger rows +│ +99 │ SELECT count\(\*\) FROM ledger/);
      expect(text).toMatch(/│ distinct payments +│ +99 │ .* = rows = completed: ok/);
      expect(text).toMatch(
        /│ runs rolled back +│ +13 │ 10 threw after their INSERT · 3 connections killed before COMMIT +│/,
      );
      expect(text).toMatch(
        /^OK: one ledger row per payment, committed with its completion; poison dead-lettered, nothing lost\.$/m,
      );
    });

    it('names the rolled-back rows it cannot attribute', () => {
      const figures = { ...clean, database: { ...database, inserted: 114, rolledBack: 15 } };
      expect(formatSummary(figures)).toMatch(/killed before COMMIT · 2 other +│/);
    });

    it('fails a payment with two rows, and rows that disagree with the completions', () => {
      const twice = { ...clean, database: { ...database, rows: 100, rolledBack: 12 } };
      expect(violations(twice)).toEqual([
        'idemq_demo_x.ledger holds 100 row(s) for 99 distinct payment(s): a payment charged more than once',
      ]);
      expect(formatSummary(twice)).toMatch(/│ distinct payments +│ +99 │ .*: FAILED/);
      const uncharged = {
        ...clean,
        database: { ...database, rows: 98, distinctPayments: 98, mismatched: 1 },
      };
      expect(violations(uncharged)).toEqual([
        '1 payment(s) whose ledger rows disagree with their completion (98 charged, 99 completed)',
      ]);
    });
  });

  it('fails on every other broken invariant too', () => {
    expect(violations({ ...clean, lost: 2 })).toHaveLength(1);
    expect(violations({ ...clean, completedAndDeadLettered: 1 })).toHaveLength(1);
    expect(violations({ ...clean, unexpectedDeadLetters: 1 })).toHaveLength(1);
    expect(violations({ ...clean, unsettledCopies: 1 })).toHaveLength(1);
    expect(violations({ ...clean, timedOut: true })).toHaveLength(1);
  });
});
