import { describe, expect, it } from 'vitest';
import { audit, deadLettersOwed, type PublishedPlan } from './audit.js';
import { Counters, type LedgerSnapshot } from './ledger.js';

// Negative controls: each checker must fail on a history that breaks its invariant, so no run
// can pass vacuously.

const plan: PublishedPlan = { healthy: ['a', 'b'], poison: ['p'], badInputs: 1, maxAttempts: 3 };

function history(overrides: Partial<LedgerSnapshot> = {}): LedgerSnapshot {
  return {
    executions: new Map([
      ['a', 1],
      ['b', 1],
      ['p', 3],
    ]),
    effects: new Map([
      ['a', 10],
      ['b', 11],
    ]),
    replays: new Map(),
    completions: new Map([
      ['a', 1],
      ['b', 1],
    ]),
    unclaimedExecutions: 0,
    deadLetters: [
      { requestId: 'p', code: 'IDEMQ_ERR_MAX_ATTEMPTS', reason: 'poison', attempts: 3 },
      { requestId: undefined, code: 'IDEMQ_ERR_REQUEST_ID_MISSING', reason: 'no id', attempts: 0 },
    ],
    counters: Object.fromEntries(Object.values(Counters).map((c) => [c, 0])) as never,
    ...overrides,
  };
}

describe('audit', () => {
  it('passes a clean history and counts the at-least-once cost', () => {
    const report = audit(plan, history(), new Set());
    expect(report.ok).toBe(true);
    expect(report.executions).toBe(5);
    expect(report.completions).toBe(2);
    expect(report.reExecutions).toBe(3);
    expect(report.deadLetteredByCode).toEqual({
      IDEMQ_ERR_MAX_ATTEMPTS: 1,
      IDEMQ_ERR_REQUEST_ID_MISSING: 1,
    });
  });

  it('reports an id the store completed twice', () => {
    const report = audit(
      plan,
      history({
        completions: new Map([
          ['a', 2],
          ['b', 1],
        ]),
      }),
      new Set(),
    );
    expect(report.ok).toBe(false);
    expect(report.completedTwice).toEqual(['a']);
  });

  it('reports a healthy id without an effect or without a completion as lost', () => {
    const noEffect = audit(plan, history({ effects: new Map([['a', 10]]) }), new Set());
    expect(noEffect.lost).toEqual(['b']);
    const noCompletion = history({ completions: new Map([['a', 1]]) });
    expect(audit(plan, noCompletion, new Set()).lost).toEqual(['b']);
    // Completed in the store, the ledger write lost with a killed process: not lost.
    const inStore = audit(plan, noCompletion, new Set(['b']));
    expect(inStore.ok).toBe(true);
    expect(inStore.completions).toBe(2);
    expect(inStore.completionsSeenOnlyInStore).toBe(1);
  });

  it('reports a handler run no claim issued', () => {
    expect(audit(plan, history({ unclaimedExecutions: 1 }), new Set()).ok).toBe(false);
  });

  it('reports poison dead-lettered with the wrong attempts or no reason, and healthy ids there', () => {
    const wrongAttempts = history({
      deadLetters: [
        { requestId: 'p', code: 'IDEMQ_ERR_MAX_ATTEMPTS', reason: 'poison', attempts: 2 },
        { requestId: 'a', code: 'IDEMQ_ERR_MAX_ATTEMPTS', reason: 'x', attempts: 3 },
        { requestId: undefined, code: 'IDEMQ_ERR_REQUEST_ID_MISSING', reason: 'x', attempts: 0 },
      ],
    });
    const report = audit(plan, wrongAttempts, new Set());
    expect(report.poisonUnaccounted).toEqual(['p']);
    expect(report.healthyDeadLettered).toEqual(['a']);
    expect(report.ok).toBe(false);
  });

  it('reports a bad input that never reached the dead letters', () => {
    const missing = history({
      deadLetters: [{ requestId: 'p', code: 'C', reason: 'poison', attempts: 3 }],
    });
    expect(audit(plan, missing, new Set()).badInputsUnaccounted).toBe(1);
  });
});

describe('deadLettersOwed (when a run may stop waiting)', () => {
  const twoPoison: PublishedPlan = { ...plan, poison: ['p', 'q'] };
  const dead = (requestId: string | undefined, attempts = 3) => ({
    requestId,
    code: 'IDEMQ_ERR_MAX_ATTEMPTS',
    reason: 'poison',
    attempts,
  });

  it('is zero once every poison id and every bad input is dead-lettered', () => {
    expect(deadLettersOwed(twoPoison, [dead('p'), dead('q'), dead(undefined, 0)])).toBe(0);
  });

  it("does not let a poison id's extra copies stand in for another still retrying", () => {
    // As many dead letters as expected (3), but q has none yet: a count would stop here.
    expect(deadLettersOwed(twoPoison, [dead('p'), dead('p'), dead(undefined, 0)])).toBe(1);
  });

  it('waits for a dead letter with every attempt, and for the bad inputs', () => {
    expect(deadLettersOwed(twoPoison, [dead('p'), dead('q', 2)])).toBe(2);
  });
});
