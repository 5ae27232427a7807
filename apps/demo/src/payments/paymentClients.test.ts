import { describe, expect, it } from 'vitest';
import {
  paymentOrder,
  paymentSeq,
  plannedDurations,
  retryBackoffMs,
  runPaymentClients,
} from './paymentClients.js';

describe('the payments clients', () => {
  it('numbers payments so that the service finds each one’s plan', () => {
    expect(paymentOrder(42)).toEqual({ seq: 42, paymentId: 'pay_000042', amountCents: 32_998 });
    expect(paymentSeq(paymentOrder(1234).paymentId)).toBe(1234);
    expect(paymentSeq('never-sent-3')).toBeNaN();
  });

  it('draws the same durations from the same seed, within bounds', () => {
    const durations = plannedDurations(7, 50, 150);
    expect(plannedDurations(7, 50, 150)).toEqual(durations);
    expect(durations.every((ms) => ms >= 0 && ms <= 150)).toBe(true);
  });

  it('keeps every backoff between 0 and its capped bound', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const ms = retryBackoffMs(attempt, 20, 200);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(Math.min(200, 20 * 2 ** (attempt - 1)));
    }
  });

  it('shares the payments among the clients, each one at a time', async () => {
    const byClient = new Map<number, number>();
    let running = 0;
    let most = 0;
    const outcomes = await runPaymentClients({
      payments: 9,
      clients: 3,
      signal: new AbortController().signal,
      pay: async (order, client) => {
        running++;
        most = Math.max(most, running);
        byClient.set(client, (byClient.get(client) ?? 0) + 1);
        await Promise.resolve();
        running--;
        return `ch_${order.seq}`;
      },
    });
    expect(outcomes).toHaveLength(9);
    expect(outcomes.every(({ chargeId }) => chargeId !== undefined)).toBe(true);
    expect([...byClient.keys()].sort()).toEqual([0, 1, 2]);
    expect(most).toBe(3);
  });

  it('counts the payments never sent once the signal aborted as lost', async () => {
    const controller = new AbortController();
    const outcomes = await runPaymentClients({
      payments: 5,
      clients: 1,
      signal: controller.signal,
      pay: async (order) => {
        if (order.seq === 1) controller.abort();
        return `ch_${order.seq}`;
      },
    });
    expect(outcomes.map(({ paymentId }) => paymentId)).toEqual([
      'pay_000000',
      'pay_000001',
      'never-sent-2',
      'never-sent-3',
      'never-sent-4',
    ]);
    expect(outcomes.slice(2).every(({ chargeId }) => chargeId === undefined)).toBe(true);
  });
});
