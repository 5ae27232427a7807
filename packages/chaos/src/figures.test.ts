import { describe, expect, it } from 'vitest';
import { type FiguresRow, figuresTable } from './figures.js';

const row: FiguresRow = {
  transport: 'memory',
  scenario: 'F02',
  consumers: 3,
  storeProfile: 'appendonly yes, appendfsync always',
  consumerKind: 'in-process',
  messages: 400,
  published: 535,
  duplicatesInjected: 135,
  badInputs: 0,
  kills: 3,
  storeRestarts: 0,
  storeKills: 0,
  brokerBreaks: 0,
  brokerRestarts: 0,
  executions: 402,
  completions: 400,
  completionsSeenOnlyInStore: 0,
  completedTwice: 0,
  lost: 0,
  deadLettered: 0,
  deadLetteredByCode: {},
  reExecutions: 2,
  reExecutionsAllowed: 30,
  replayedEffects: 0,
  staleEffectsRefused: 0,
  leaseLost: 0,
  brokerLeaseLost: 0,
  unclaimedExecutions: 0,
  duplicatesSkipped: 134,
  storeErrors: 0,
  storeKeysWithoutTtl: 0,
  wallMs: 8257,
  seed: 1,
  passed: true,
};

describe('figuresTable', () => {
  it('prints one Markdown row per run and marks simulated kills', () => {
    const lines = figuresTable([row, { ...row, consumerKind: 'process', passed: false }]).split(
      '\n',
    );
    expect(lines).toHaveLength(4);
    expect(lines[2]).toContain('| 3 (in-proc) |');
    expect(lines[2]).toContain('| 3 (sim) |');
    expect(lines[2]).toContain('| 8.3 s | pass |');
    expect(lines[3]).toContain('| 3 | 400 |');
    expect(lines[3]).toMatch(/\| FAIL \|$/);
  });

  it('counts SIGTERM and SIGKILL store restarts together and says how many were SIGKILLs', () => {
    const [, , line] = figuresTable([{ ...row, storeRestarts: 1, storeKills: 1 }]).split('\n');
    expect(line).toContain('| 2 store (1 SIGKILL) / 0 broker |');
    expect(line).toContain('| 402 | 400 | 30 |');
  });
});
