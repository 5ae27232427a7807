import { describe, expect, it } from 'vitest';
import { audit as auditWith, deadLettersOwed, type PublishedPlan } from './audit.js';
import type { ReExecutionAllowance } from './executionBound.js';
import { Counters, type LedgerSnapshot } from './ledger.js';

// Negative controls: each checker must fail on a history that breaks its invariant, so no run
// can pass vacuously.

const plan: PublishedPlan = { healthy: ['a', 'b'], poison: ['p'], badInputs: 1, maxAttempts: 3 };

/** No fault injected: every healthy id runs once. */
const EXACT: ReExecutionAllowance = { allowed: 0, basis: 'none: no fault injected' };

const audit = (
  published: PublishedPlan,
  snapshot: LedgerSnapshot,
  completedInStore: ReadonlySet<string>,
  allowance = EXACT,
) => auditWith(published, snapshot, completedInStore, allowance);

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
    expect(report.healthyExecutions).toBe(2);
    expect(report.healthyCompletions).toBe(2);
    expect(report.poisonExecutions).toBe(3);
    expect(report.excessExecutions).toBe(0);
    expect(report.boundViolations).toEqual([]);
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

describe('audit: execution bounds', () => {
  const executions = (a: number, b: number, p: number, extra: Array<[string, number]> = []) =>
    history({
      executions: new Map([['a', a], ['b', b], ['p', p], ...extra]),
    });

  it('holds a history without faults to executions = completions, poison to maxAttempts runs', () => {
    const report = audit(plan, executions(1, 1, 3), new Set());
    expect(report.ok).toBe(true);
    expect(report.boundViolations).toEqual([]);
  });

  it('fails one healthy re-execution when no fault allows any, and says which bound', () => {
    const report = audit(plan, executions(2, 1, 3), new Set());
    expect(report.ok).toBe(false);
    expect(report.excessExecutions).toBe(1);
    expect(report.boundViolations).toEqual([
      're-execution bound (executions = completions): healthy executions 3 − completions 2 = 1 re-executions, more than the 0 allowed (none: no fault injected)',
    ]);
    // The other invariants all hold: only the bound sees it.
    expect(report.lost).toEqual([]);
    expect(report.completedTwice).toEqual([]);
    expect(report.unclaimedExecutions).toBe(0);
  });

  it('allows re-executions up to what the faults explain, and fails one more', () => {
    const allowance: ReExecutionAllowance = { allowed: 3, basis: '1 kill × 3' };
    expect(audit(plan, executions(3, 2, 3), new Set(), allowance).ok).toBe(true);
    const over = audit(plan, executions(3, 3, 3), new Set(), allowance);
    expect(over.ok).toBe(false);
    expect(over.boundViolations).toEqual([
      're-execution bound: healthy executions 6 − completions 2 = 4 re-executions, more than the 3 allowed (1 kill × 3)',
    ]);
  });

  it('counts a completion seen only in the store as a healthy completion', () => {
    const noLedgerCompletion = history({ completions: new Map([['a', 1]]) });
    const report = audit(plan, noLedgerCompletion, new Set(['b']));
    expect(report.healthyCompletions).toBe(2);
    expect(report.boundViolations).toEqual([]);
  });

  it('fails a poison id run more than maxAttempts times, whatever the faults allow', () => {
    const generous: ReExecutionAllowance = { allowed: 100, basis: 'many faults' };
    const report = audit(plan, executions(1, 1, 4), new Set(), generous);
    expect(report.ok).toBe(false);
    expect(report.poisonExecutions).toBe(4);
    expect(report.boundViolations).toEqual([
      'poison executions: 1 poison ids ran more than maxAttempts 3 times (p ×4)',
    ]);
  });

  it('fails a handler run of an id never published (a bad input reached the handler)', () => {
    const report = audit(plan, executions(1, 1, 3, [['stray', 1]]), new Set());
    expect(report.ok).toBe(false);
    expect(report.unplannedExecutions).toBe(1);
    expect(report.boundViolations).toEqual([
      'unplanned executions: 1 handler runs of ids never published',
    ]);
  });
});
