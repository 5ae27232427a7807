import { describe, expect, it } from 'vitest';
import { retryAfter } from './retryingClient.js';

describe('retryAfter', () => {
  it('reads delay-seconds as milliseconds', () => {
    expect(retryAfter('1')).toBe(1000);
    expect(retryAfter(' 3 ')).toBe(3000);
  });

  it('ignores a missing header and the HTTP-date form', () => {
    expect(retryAfter(null)).toBeUndefined();
    expect(retryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(retryAfter('-1')).toBeUndefined();
  });
});
