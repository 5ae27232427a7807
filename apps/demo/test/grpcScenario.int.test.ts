import { describe, expect, it } from 'vitest';
import { runGrpcScenario } from '../src/grpc/grpcScenario.js';
import { grpcViolations } from '../src/grpc/grpcSummary.js';

describe('the gRPC demo scenario on the real Redis store', () => {
  it('charges 200 payments once each while deadlines expire and the handler fails transiently', async () => {
    const figures = await runGrpcScenario({
      payments: 200,
      clients: 8,
      seed: 99,
      store: 'redis',
      timeoutMs: 40_000,
    });
    expect(figures.store).toBe('redis');
    expect(grpcViolations(figures)).toEqual([]);
    expect(figures.chargedTwice).toBe(0);
    expect(figures.lost).toBe(0);
    expect(figures.charged).toBe(200);
    expect(figures.handlerRuns).toBe(200 + figures.injectedFailures);
    expect(figures.deadlineExpiries).toBeGreaterThan(0);
    expect(figures.replays).toBeGreaterThan(0);
  });
});
