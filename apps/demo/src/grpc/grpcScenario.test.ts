import { describe, expect, it } from 'vitest';
import { runGrpcScenario } from './grpcScenario.js';
import { grpcViolations } from './grpcSummary.js';

// Shorter deadline and handler than the CLI's (100 / 150 ms): the same races, in about a second.
const FAST = { deadlineMs: 40, maxHandlerMs: 60 };

describe('the gRPC demo scenario (memory store)', () => {
  it('charges every payment once while deadlines expire and the handler fails transiently', async () => {
    const figures = await runGrpcScenario({
      payments: 120,
      clients: 8,
      seed: 42,
      store: 'memory',
      timeoutMs: 30_000,
      ...FAST,
    });
    expect(grpcViolations(figures)).toEqual([]);
    expect(figures.chargedTwice).toBe(0);
    expect(figures.lost).toBe(0);
    expect(figures.charged).toBe(120);
    expect(figures.charges).toBe(120);
    // Every handler run either charged or failed as planned: none ran twice for one payment.
    expect(figures.handlerRuns).toBe(120 + figures.injectedFailures);
    // The scenario does exercise retries: expired deadlines, then ABORTED or replays; failures.
    expect(figures.deadlineExpiries).toBeGreaterThan(0);
    expect(figures.replays).toBeGreaterThan(0);
    expect(figures.injectedFailures).toBeGreaterThan(0);
    expect(figures.calls).toBeGreaterThan(120);
    expect(figures.unexpectedStatuses).toBe(0);
  });

  it('fails the run when the method is served without the interceptor', async () => {
    const figures = await runGrpcScenario({
      payments: 24,
      clients: 8,
      seed: 42,
      store: 'memory',
      timeoutMs: 30_000,
      unprotected: true,
      ...FAST,
    });
    expect(figures.chargedTwice).toBeGreaterThan(0);
    expect(grpcViolations(figures).join('\n')).toMatch(/charged more than once/);
  });

  it('counts payments not answered when time runs out as lost', async () => {
    const figures = await runGrpcScenario({
      payments: 200,
      clients: 2,
      seed: 7,
      store: 'memory',
      timeoutMs: 100,
      ...FAST,
    });
    expect(figures.timedOut).toBe(true);
    expect(figures.lost).toBeGreaterThan(0);
    expect(grpcViolations(figures).join('\n')).toMatch(/never got its charge/);
  });
});
