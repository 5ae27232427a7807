import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from './key.js';

describe('parseIdempotencyKey', () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"with space"', 'with space'],
    ['"say \\"hi\\" \\\\ bye"', 'say "hi" \\ bye'],
    ['key_1:2/3', 'key_1:2/3'],
  ])('reads %s as %j', (header, key) => {
    expect(parseIdempotencyKey(header, 255)).toEqual({ kind: 'key', key });
  });

  it('reports a missing header', () => {
    expect(parseIdempotencyKey(null, 255)).toEqual({ kind: 'missing' });
  });

  it.each([
    ['', /empty/],
    ['""', /empty/],
    ['"abc', /no closing quote/],
    ['"abc"x', /follow the closing quote/],
    ['"a", "b"', /follow the closing quote/],
    ['a, b', /commas/],
    ['"a\\nb"', /backslash/],
    ['"a\tb"', /control/],
    ['a\u0001b', /control/],
    ['caf\u00e9', /non-ASCII/],
    ['a"b', /quotes/],
  ])('refuses %j', (header, reason) => {
    const parsed = parseIdempotencyKey(header, 255);
    expect(parsed.kind).toBe('malformed');
    expect(parsed.kind === 'malformed' && parsed.reason).toMatch(reason);
  });

  it('counts the length after unquoting, up to the limit', () => {
    expect(parseIdempotencyKey(`"${'k'.repeat(10)}"`, 10)).toEqual({
      kind: 'key',
      key: 'k'.repeat(10),
    });
    expect(parseIdempotencyKey('k'.repeat(11), 10)).toMatchObject({ kind: 'malformed' });
    expect(parseIdempotencyKey(`"${'k'.repeat(11)}"`, 10)).toMatchObject({ kind: 'malformed' });
  });
});
