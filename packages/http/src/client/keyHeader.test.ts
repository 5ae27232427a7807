import { isIdemqError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { formatKeyHeader } from './keyHeader.js';

describe('formatKeyHeader', () => {
  const key = '0190f4b2-7c3e-7a1b-8c2d-3e4f5a6b7c8d';

  it('sends a bare token by default form', () => {
    expect(formatKeyHeader(key, 'token')).toBe(key);
  });

  it('quotes an sf-string, escaping quote and backslash', () => {
    expect(formatKeyHeader(key, 'sf-string')).toBe(`"${key}"`);
    expect(formatKeyHeader('a"b\\c', 'sf-string')).toBe('"a\\"b\\\\c"');
  });

  it('refuses keys a header cannot carry unchanged', () => {
    for (const bad of ['', ' lead', 'trail ', 'tab\there', 'nl\n', 'é', '\u0000']) {
      let caught: unknown;
      try {
        formatKeyHeader(bad, 'token');
      } catch (error) {
        caught = error;
      }
      expect(isIdemqError(caught), JSON.stringify(bad)).toBe(true);
      expect((caught as { code: string }).code).toBe('IDEMQ_ERR_REQUEST_ID_INVALID');
    }
  });
});
