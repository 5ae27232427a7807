import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { fingerprint } from './fingerprint.js';
import { recordKey } from './recordKey.js';
import { requestIdFromBytes, validateRequestId } from './requestId.js';
import { uuidv7 } from './uuidv7.js';

describe('validateRequestId', () => {
  const codeOf = (value: unknown, max?: number) => {
    try {
      validateRequestId(value, max);
      return 'valid';
    } catch (error) {
      return (error as { code: string }).code;
    }
  };

  it('accepts ids as they are, without trimming or normalising', () => {
    expect(validateRequestId(' a ')).toBe(' a ');
    expect(validateRequestId('e\u0301')).toBe('e\u0301');
    expect(validateRequestId('{x}:*?[]')).toBe('{x}:*?[]');
  });

  it('gives each kind of bad id its own code', () => {
    expect(codeOf(undefined)).toBe(ErrorCodes.REQUEST_ID_MISSING);
    expect(codeOf(null)).toBe(ErrorCodes.REQUEST_ID_MISSING);
    expect(codeOf('')).toBe(ErrorCodes.REQUEST_ID_MISSING);
    expect(codeOf(' \n\t')).toBe(ErrorCodes.REQUEST_ID_MISSING);
    expect(codeOf(42)).toBe(ErrorCodes.REQUEST_ID_INVALID);
    expect(codeOf('a\ud800b')).toBe(ErrorCodes.REQUEST_ID_INVALID);
  });

  it('measures the limit in UTF-8 bytes, default 512', () => {
    expect(codeOf('x'.repeat(512))).toBe('valid');
    expect(codeOf('x'.repeat(513))).toBe(ErrorCodes.REQUEST_ID_TOO_LONG);
    expect(codeOf('é'.repeat(257))).toBe(ErrorCodes.REQUEST_ID_TOO_LONG); // 514 bytes
    expect(codeOf('x'.repeat(1025), 1024)).toBe(ErrorCodes.REQUEST_ID_TOO_LONG);
  });

  it('refuses invalid UTF-8 bytes instead of replacing them', () => {
    expect(requestIdFromBytes(Buffer.from('abc'))).toBe('abc');
    expect(() => requestIdFromBytes(Uint8Array.of(0x61, 0xff, 0x62))).toThrow(/UTF-8/);
  });
});

describe('recordKey', () => {
  it('is injective over (scope, id) pairs, separators included', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(text, text, text, text, (scopeA, idA, scopeB, idB) => {
        fc.pre(scopeA !== scopeB || idA !== idB);
        expect(recordKey('idemq', scopeA, idA)).not.toBe(recordKey('idemq', scopeB, idB));
      }),
      { numRuns: 2000 },
    );
    // The pairs a naive `scope:id` join would confuse.
    expect(recordKey('idemq', 'a:b', 'c')).not.toBe(recordKey('idemq', 'a', 'b:c'));
    expect(recordKey('idemq', 'a\u0000', 'b')).not.toBe(recordKey('idemq', 'a', '\u0000b'));
  });

  it('is bounded and carries exactly one hash tag that user bytes cannot enter', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), fc.string({ maxLength: 600 }), (scope, id) => {
        const key = recordKey('idemq', scope, id);
        expect(Buffer.byteLength(key)).toBeLessThanOrEqual(96);
        expect(key).toMatch(/^idemq:\{[A-Za-z0-9_-]{43}\}$/);
      }),
    );
  });
});

describe('uuidv7', () => {
  it('has the RFC 9562 version and variant and the given time', () => {
    const id = uuidv7(0x0123456789ab);
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts in creation order, also within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('fingerprint', () => {
  it('is SHA-256 of the bytes, equal for equal bytes', () => {
    expect(fingerprint('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(fingerprint(Buffer.from('abc'))).toBe(fingerprint('abc'));
    expect(fingerprint('abd')).not.toBe(fingerprint('abc'));
  });
});
