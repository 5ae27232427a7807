import { describe, expect, it } from 'vitest';
import { requestScope } from './requestScope.js';

describe('requestScope', () => {
  it('writes the route and principal length-prefixed', () => {
    expect(requestScope('http', '/orders', undefined)).toBe('http:7:/orders');
    expect(requestScope('http', '/orders', 'acme')).toBe('http:7:/orders:4:acme');
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
    const scopes = pairs.map(([route, principal]) => requestScope('http', route, principal));
    expect(new Set(scopes).size).toBe(pairs.length);
  });
});
