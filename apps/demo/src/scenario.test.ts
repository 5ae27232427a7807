import { describe, expect, it } from 'vitest';
import { expectCorrect, lateDuplicates } from '../test/scenarioChecks.js';
import { createScenario } from './scenario.js';
import { violations } from './summary.js';

describe('the demo scenario', () => {
  it('processes 300 payments with duplicates, failures and poison exactly once', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 4,
      seed: 1234,
      timeoutMs: 30_000,
    });
    const figures = await scenario.run();
    expect(figures.uniqueIds).toBe(300);
    expect(figures.poison).toBe(3);
    expect(figures.sent).toBe(300 + scenario.plan.duplicates.size);
    expect(figures.retries).toBeGreaterThan(0);
    expectCorrect(figures, lateDuplicates(scenario));
  });

  it('stays correct when every payment is sent twice to one consumer', async () => {
    const scenario = createScenario({
      messages: 200,
      duplicates: 1,
      consumers: 1,
      seed: 99,
      timeoutMs: 30_000,
      poisonRate: 0.05,
    });
    const figures = await scenario.run();
    expect(figures.sent).toBe(400);
    expectCorrect(figures, lateDuplicates(scenario));
  });

  it('counts payments not settled when time runs out as lost', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 2,
      seed: 5,
      timeoutMs: 1,
    });
    const figures = await scenario.run();
    expect(figures.timedOut).toBe(true);
    expect(figures.lost).toBeGreaterThan(0);
    expect(violations(figures).join('\n')).toMatch(/neither completed nor dead-lettered/);
  });
});
