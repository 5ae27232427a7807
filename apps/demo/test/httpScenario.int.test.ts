import { describe, expect, it } from 'vitest';
import { runHttpScenario } from '../src/http/httpScenario.js';
import { httpViolations } from '../src/http/httpSummary.js';

describe('the HTTP demo scenario on the real Redis store', () => {
  it('charges 200 payments once each while clients time out and retry', async () => {
    const figures = await runHttpScenario({
      payments: 200,
      clients: 8,
      seed: 99,
      store: 'redis',
      timeoutMs: 40_000,
    });
    expect(figures.store).toBe('redis');
    expect(httpViolations(figures)).toEqual([]);
    expect(figures.chargedTwice).toBe(0);
    expect(figures.lost).toBe(0);
    expect(figures.charged).toBe(200);
    expect(figures.routeRuns).toBe(200);
    expect(figures.timeouts).toBeGreaterThan(0);
    expect(figures.replays).toBeGreaterThan(0);
  });
});
