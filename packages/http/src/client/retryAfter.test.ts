import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retryAfter.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-10-21T07:28:00Z');

  it('reads delay-seconds as milliseconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
  });

  it('reads an HTTP-date as the time left until it', () => {
    expect(parseRetryAfter('Tue, 21 Oct 2025 07:28:05 GMT', now)).toBe(5000);
    // The obsolete RFC 850 form, which RFC 9110 says a recipient must accept.
    expect(parseRetryAfter('Tuesday, 21-Oct-25 07:28:03 GMT', now)).toBe(3000);
  });

  it('answers 0 for a date already past', () => {
    expect(parseRetryAfter('Tue, 21 Oct 2025 07:27:00 GMT', now)).toBe(0);
  });

  it('ignores a missing or malformed value', () => {
    for (const value of [
      null,
      '',
      '  ',
      '-1',
      '1.5',
      '1e3',
      'soon',

      'Tue, 99 Foo 2025 xx:yy GMT',
    ]) {
      expect(parseRetryAfter(value, now), String(value)).toBeUndefined();
    }
  });
});
