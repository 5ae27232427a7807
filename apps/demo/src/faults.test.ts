import { describe, expect, it } from 'vitest';
import { planFaults } from './faults.js';

const options = { messages: 2000, duplicates: 0.25, seed: 42, maxAttempts: 4 };

describe('planFaults', () => {
  it('is a pure function of the seed', () => {
    const a = planFaults(options);
    const b = planFaults(options);
    expect([...a.poison]).toEqual([...b.poison]);
    expect([...a.duplicates]).toEqual([...b.duplicates]);
    for (let seq = 0; seq < 200; seq++) {
      expect(a.failsTransiently(seq, 1)).toBe(b.failsTransiently(seq, 1));
      expect(a.workMs(seq, 2)).toBe(b.workMs(seq, 2));
    }
    expect([...planFaults({ ...options, seed: 43 }).poison]).not.toEqual([...a.poison]);
  });

  it('makes exactly 1 % poison and duplicates the requested share', () => {
    const plan = planFaults(options);
    expect(plan.poison.size).toBe(20);
    expect(plan.duplicates.size).toBe(500);
    const kinds = [...plan.duplicates.values()];
    const late = kinds.filter((kind) => kind === 'after-completion').length;
    expect(late).toBeGreaterThan(200);
    expect(kinds.length - late).toBeGreaterThan(200);
  });

  it('never plans an after-completion duplicate of a poison payment', () => {
    const plan = planFaults({ ...options, duplicates: 1 });
    for (const [seq, kind] of plan.duplicates) {
      if (plan.poison.has(seq)) expect(kind).toBe('concurrent');
    }
  });

  it('fails about 5 % of first attempts, and never the last attempt', () => {
    const plan = planFaults(options);
    let failures = 0;
    for (let seq = 0; seq < 2000; seq++) {
      if (plan.failsTransiently(seq, 1)) failures++;
      expect(plan.failsTransiently(seq, 4)).toBe(false);
      expect(plan.failsTransiently(seq, 5)).toBe(false);
    }
    expect(failures).toBeGreaterThan(60);
    expect(failures).toBeLessThan(140);
  });

  it('kills about 2 % of connections, on first attempts of payments that are not poison', () => {
    const plan = planFaults(options);
    let kills = 0;
    for (let seq = 0; seq < 2000; seq++) {
      if (plan.killsConnection(seq, 1)) {
        kills++;
        expect(plan.poison.has(seq)).toBe(false);
      }
      expect(plan.killsConnection(seq, 2)).toBe(false);
    }
    expect(kills).toBeGreaterThan(20);
    expect(kills).toBeLessThan(60);
    expect(planFaults({ ...options, maxAttempts: 1 }).killsConnection(0, 1)).toBe(false);
    const same = planFaults(options);
    for (let seq = 0; seq < 200; seq++) {
      expect(same.killsConnection(seq, 1)).toBe(plan.killsConnection(seq, 1));
    }
  });
});
