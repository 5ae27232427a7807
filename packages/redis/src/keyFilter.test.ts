import { recordKey } from '@idemq/core/adapter';
import { describe, expect, it } from 'vitest';
import { KeyFilter } from './keyFilter.js';

const keys = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => recordKey('idemq', 'orders', `${label}-${i}`));

describe('KeyFilter', () => {
  it('never turns away a key it holds, and turns away most keys it does not', () => {
    const filter = new KeyFilter(10_000);
    const held = keys('held', 10_000);
    for (const key of held) filter.add(key);
    expect(held.every((key) => filter.mayHold(key))).toBe(true);
    const passed = keys('absent', 10_000).filter((key) => filter.mayHold(key)).length;
    expect(passed / 10_000).toBeLessThan(0.2);
  });

  it('forgets a removed key once no other key shares its bucket', () => {
    const filter = new KeyFilter(1_000);
    const [only] = keys('one', 1) as [string];
    filter.add(only);
    filter.add(only);
    filter.remove(only);
    expect(filter.mayHold(only)).toBe(true);
    filter.remove(only);
    expect(filter.mayHold(only)).toBe(false);
  });
});
