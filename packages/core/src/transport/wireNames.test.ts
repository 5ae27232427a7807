import { describe, expect, it } from 'vitest';
import { WireNames } from './wireNames.js';

describe('WireNames', () => {
  const names = Object.values(WireNames);

  it('follow one scheme: x-idemq- and lowercase words joined by hyphens', () => {
    for (const name of names) expect(name).toMatch(/^x-idemq-[a-z]+(-[a-z]+)*$/);
  });

  it('are valid SQS message attribute names', () => {
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_.-]{1,256}$/);
      expect(name).not.toMatch(/^(aws|amazon)\./i);
      expect(name).not.toMatch(/\.\.|^\.|\.$/);
    }
  });

  it('name each thing once', () => {
    expect(new Set(names).size).toBe(names.length);
  });
});
