import { describe, expect, it } from 'vitest';
import { recordScope } from './scope.js';

describe('recordScope', () => {
  it('writes the route and principal length-prefixed', () => {
    expect(recordScope('http', '/orders', undefined)).toBe('http:7:/orders');
    expect(recordScope('http', '/orders', 'acme')).toBe('http:7:/orders:4:acme');
  });

  it('gives distinct scopes to pairs a plain join would merge', () => {
    const pairs: [string, string | undefined][] = [
      ['/a:b', undefined],
      ['/a', 'b'],
      ['/a:1:b', undefined],
      ['/a', ':b'],
      ['/a:', 'b'],
      ['/a', '1:b'],
      ['/a', ''],
      ['/a', undefined],
    ];
    const scopes = pairs.map(([route, principal]) => recordScope('http', route, principal));
    expect(new Set(scopes).size).toBe(pairs.length);
  });
});
