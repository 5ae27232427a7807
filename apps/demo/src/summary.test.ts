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

  it('fails on every other broken invariant too', () => {
    expect(violations({ ...clean, lost: 2 })).toHaveLength(1);
    expect(violations({ ...clean, completedAndDeadLettered: 1 })).toHaveLength(1);
    expect(violations({ ...clean, unexpectedDeadLetters: 1 })).toHaveLength(1);
    expect(violations({ ...clean, unsettledCopies: 1 })).toHaveLength(1);
    expect(violations({ ...clean, timedOut: true })).toHaveLength(1);
  });
});
