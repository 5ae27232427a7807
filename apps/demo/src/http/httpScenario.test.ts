import { describe, expect, it } from 'vitest';
import { runHttpScenario } from './httpScenario.js';
import { httpViolations } from './httpSummary.js';

describe('the HTTP demo scenario (memory store)', () => {
  it('charges every payment once while clients time out and retry with the same key', async () => {
    const figures = await runHttpScenario({
      payments: 120,
      clients: 8,
      seed: 42,
      store: 'memory',
      timeoutMs: 30_000,
    });
    expect(httpViolations(figures)).toEqual([]);
    expect(figures.chargedTwice).toBe(0);
    expect(figures.lost).toBe(0);
    expect(figures.charged).toBe(120);
    expect(figures.routeRuns).toBe(120);
    // The scenario does exercise retries: timeouts, then 409s or replays for the same key.
    expect(figures.timeouts).toBeGreaterThan(0);
    expect(figures.replays).toBeGreaterThan(0);
    expect(figures.attempts).toBeGreaterThan(120);
  });

  it('fails the run when the route is served without idempotency', async () => {
    const figures = await runHttpScenario({
      payments: 24,
      clients: 8,
      seed: 42,
      store: 'memory',
      timeoutMs: 30_000,
      unprotected: true,
    });
    expect(figures.chargedTwice).toBeGreaterThan(0);
    expect(httpViolations(figures).join('\n')).toMatch(/charged more than once/);
  });

  it('counts payments not answered when time runs out as lost', async () => {
    const figures = await runHttpScenario({
      payments: 200,
      clients: 2,
      seed: 7,
      store: 'memory',
      timeoutMs: 100,
    });
    expect(figures.timedOut).toBe(true);
    expect(figures.lost).toBeGreaterThan(0);
    expect(httpViolations(figures).join('\n')).toMatch(/never got its charge/);
  });
});
