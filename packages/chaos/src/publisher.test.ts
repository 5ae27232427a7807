import { seededRandom } from '@idemq/core/testing';
import { describe, expect, it } from 'vitest';
import { planPublishing } from './publisher.js';

describe('planPublishing', () => {
  it('sends about the asked share of ids two or more times, every id at least once', () => {
    const plan = planPublishing('t', 10_000, 10, 0.3, seededRandom(42));
    const copies = new Map<string, number>();
    for (const item of plan.order)
      copies.set(item.requestId, (copies.get(item.requestId) ?? 0) + 1);
    expect(copies.size).toBe(10_010);
    const duplicated = [...copies.values()].filter((n) => n >= 2).length / copies.size;
    expect(duplicated).toBeGreaterThan(0.27);
    expect(duplicated).toBeLessThan(0.33);
    expect([...copies.values()].some((n) => n >= 3)).toBe(true);
    expect(plan.duplicatesInjected).toBe(plan.order.length - copies.size);
    expect(plan.order.filter((item) => item.body.poison).length).toBeGreaterThanOrEqual(10);
  });

  it('is a pure function of the seed', () => {
    const a = planPublishing('t', 500, 5, 0.3, seededRandom(7));
    const b = planPublishing('t', 500, 5, 0.3, seededRandom(7));
    expect(a.order).toEqual(b.order);
  });
});
