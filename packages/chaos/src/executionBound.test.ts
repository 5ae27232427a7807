import { describe, expect, it } from 'vitest';
import { allowedReExecutions, FAULT_BOUND } from './executionBound.js';

const none = { kill: 0, storeRestart: 0, storeKill: 0, brokerBreak: 0, brokerRestart: 0 };

describe('allowedReExecutions', () => {
  it('allows none without faults: executions = completions', () => {
    const allowance = allowedReExecutions(FAULT_BOUND, {
      consumers: 8,
      concurrency: 16,
      faults: none,
      healthyIds: 1_000,
    });
    expect(allowance).toEqual({ allowed: 0, basis: 'none: no fault injected' });
  });

  it("allows a kill one consumer's handlers, a store or broker fault every consumer's", () => {
    const allowance = allowedReExecutions(FAULT_BOUND, {
      consumers: 3,
      concurrency: 10,
      faults: { kill: 2, storeRestart: 1, storeKill: 1, brokerBreak: 1, brokerRestart: 0 },
      healthyIds: 400,
    });
    expect(allowance.allowed).toBe(2 * 10 + 3 * 30);
    expect(allowance.basis).toBe(
      "2 kill × 10 (one consumer's handlers) + 1 storeRestart × 30 (every consumer's handlers) + 1 storeKill × 30 (every consumer's handlers) + 1 brokerBreak × 30 (every consumer's handlers)",
    );
  });

  it('adds planned takeovers per id', () => {
    const allowance = allowedReExecutions(
      { ...FAULT_BOUND, perId: 1 },
      { consumers: 2, concurrency: 64, faults: none, healthyIds: 20 },
    );
    expect(allowance).toEqual({ allowed: 20, basis: '20 ids × 1 (planned takeover)' });
  });
});
