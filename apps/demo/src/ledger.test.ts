import { describe, expect, it } from 'vitest';
import { Ledger } from './ledger.js';

describe('Ledger', () => {
  it('reports an id completed twice as processed twice', () => {
    const ledger = new Ledger();
    ledger.published('a');
    ledger.published('a');
    ledger.completed('a');
    ledger.completed('a');
    expect(ledger.report().processedTwice).toEqual(['a']);
  });

  it('reports an id charged twice as processed twice, even if it completed once', () => {
    const ledger = new Ledger();
    ledger.published('a');
    ledger.handlerStarted('a');
    ledger.effectApplied('a');
    ledger.handlerStarted('a');
    ledger.effectApplied('a');
    ledger.completed('a');
    const report = ledger.report();
    expect(report.processedTwice).toEqual(['a']);
    expect(report.handlerRuns).toBe(2);
  });

  it('does not count retries or skipped duplicates as processing twice', () => {
    const ledger = new Ledger();
    ledger.published('a');
    ledger.published('a');
    ledger.handlerStarted('a'); // fails
    ledger.handlerStarted('a');
    ledger.effectApplied('a');
    ledger.completed('a');
    ledger.duplicateSkipped('a');
    const report = ledger.report();
    expect(report.processedTwice).toEqual([]);
    expect(report).toMatchObject({ sent: 2, uniqueIds: 1, completed: 1, duplicatesSkipped: 1 });
  });

  it('reports published ids neither completed nor dead-lettered as lost', () => {
    const ledger = new Ledger();
    for (const id of ['done', 'dead', 'gone']) ledger.published(id);
    ledger.completed('done');
    ledger.deadLettered('dead');
    ledger.deadLettered('dead');
    const report = ledger.report();
    expect(report.lost).toEqual(['gone']);
    expect(report).toMatchObject({ deadLettered: 1, deadLetterMessages: 2, completed: 1 });
    expect(ledger.settled).toBe(2);
    expect(ledger.isSettled('gone')).toBe(false);
    expect(['done', 'dead', 'gone'].map((id) => ledger.isCompleted(id))).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('flags an id both completed and dead-lettered', () => {
    const ledger = new Ledger();
    ledger.published('a');
    ledger.completed('a');
    ledger.deadLettered('a');
    expect(ledger.report().completedAndDeadLettered).toEqual(['a']);
    expect(ledger.settled).toBe(1);
  });
});
