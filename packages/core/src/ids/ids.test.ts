import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { PayloadNotFingerprintableError } from '../errors/message.js';
import { fingerprint } from './fingerprint.js';
import { recordKey } from './recordKey.js';
import { controlCharacterAt, requestIdFromBytes, validateRequestId } from './requestId.js';
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

  it.each([
    ['NUL', 'a\u0000b', '0000'],
    ['a line feed', 'a\nb', '000A'],
    ['a carriage return (header splitting)', 'key\r\nX-Evil: 1', '000D'],
    ['a tab', 'a\tb', '0009'],
    ['US (end of C0)', 'a\u001fb', '001F'],
    ['DEL', 'a\u007fb', '007F'],
    ['a C1 control (U+0080)', 'a\u0080b', '0080'],
    ['a C1 control (U+009F)', 'a\u009fb', '009F'],
  ])('refuses an id holding %s with REQUEST_ID_INVALID, naming it', (_n, id, code) => {
    expect(codeOf(id)).toBe(ErrorCodes.REQUEST_ID_INVALID);
    expect(() => validateRequestId(id)).toThrow(`U+${code}`);
  });

  it('accepts the printable neighbours of the control ranges', () => {
    for (const id of ['a b', 'a~b', 'a\u00a0b', 'a\u00ffb', 'zoë 💶', 'a\u2028b']) {
      expect(validateRequestId(id)).toBe(id);
    }
    expect(controlCharacterAt('abc')).toBe(-1);
    expect(controlCharacterAt('ab\u0000')).toBe(2);
  });

  it('a blank id of whitespace controls stays missing, not invalid', () => {
    expect(codeOf('\t\r\n')).toBe(ErrorCodes.REQUEST_ID_MISSING);
  });

  it('measures the limit in UTF-8 bytes, default 512', () => {
    expect(codeOf('x'.repeat(512))).toBe('valid');
    expect(codeOf('x'.repeat(513))).toBe(ErrorCodes.REQUEST_ID_TOO_LONG);
    expect(codeOf('é'.repeat(257))).toBe(ErrorCodes.REQUEST_ID_TOO_LONG); // 514 bytes
    expect(codeOf('x'.repeat(1025), 1024)).toBe(ErrorCodes.REQUEST_ID_TOO_LONG);
    // Four UTF-8 bytes per emoji, two UTF-16 units: 128 fit in 512 bytes, 129 do not.
    expect(codeOf('💶'.repeat(128))).toBe('valid');
    expect(codeOf('💶'.repeat(129))).toBe(ErrorCodes.REQUEST_ID_TOO_LONG);
    expect(() => validateRequestId('💶'.repeat(129))).toThrow('516 bytes');
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

  it('fingerprints a JSON value as its canonical JSON text: keys sorted at every level', () => {
    expect(fingerprint({ a: 1, b: 2 })).toBe(fingerprint({ b: 2, a: 1 }));
    expect(fingerprint({ b: 2, a: 1 })).toBe(fingerprint('{"a":1,"b":2}'));
    expect(fingerprint({ z: [{ y: 1, x: null }], a: 'é' })).toBe(
      fingerprint('{"a":"é","z":[{"x":null,"y":1}]}'),
    );
    expect(fingerprint([1, 'two', true, null])).toBe(fingerprint('[1,"two",true,null]'));
    expect(fingerprint(Object.assign(Object.create(null), { k: 1 }))).toBe(fingerprint('{"k":1}'));
    expect(fingerprint(10)).toBe(fingerprint('10'));
    expect(fingerprint(null)).toBe(fingerprint('null'));
  });

  it('any JSON value fingerprints as its sorted JSON text, whatever its key order', () => {
    const reversed = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversed);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([key, item]) => [key, reversed(item)]),
      );
    };
    // Written as text: an object cannot hold "" before "0" (integer-like keys come first in JS).
    const sortedJson = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
      if (typeof value !== 'object' || value === null) return JSON.stringify(value);
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(record[key])}`).join(',')}}`;
    };
    fc.assert(
      // A string on its own is hashed as it is, not as JSON text: only what holds one is tested.
      fc.property(
        fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())),
        (value) => {
          const print = fingerprint(value as object);
          expect(fingerprint(reversed(value) as object)).toBe(print);
          expect(fingerprint(sortedJson(value))).toBe(print);
        },
      ),
    );
  });

  it('keeps different JSON values apart', () => {
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: '1' }));
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
    expect(fingerprint({ a: { b: 1 } })).not.toBe(fingerprint({ 'a.b': 1 }));
  });

  it('follows JSON for undefined: a property left out, an array item null', () => {
    expect(fingerprint({ a: 1, b: undefined })).toBe(fingerprint({ a: 1 }));
    expect(fingerprint([1, undefined])).toBe(fingerprint([1, null]));
  });

  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  let deep: unknown = 1;
  for (let i = 0; i < 1_001; i++) deep = [deep];
  it.each<[string, unknown, string, RegExp]>([
    ['a BigInt', { amount: 10n }, 'payload.amount', /is a BigInt/],
    ['a function', { run: () => 1 }, 'payload.run', /is a function/],
    ['a symbol', [Symbol('s')], 'payload[0]', /is a symbol/],
    ['NaN', { n: Number.NaN }, 'payload.n', /is NaN/],
    ['Infinity', [Number.POSITIVE_INFINITY], 'payload[0]', /is Infinity/],
    ['a cycle', cyclic, 'payload.self.back', /is a cycle/],
    ['a Date', { at: new Date(0) }, 'payload.at', /is a Date/],
    ['a Map', new Map([[1, 2]]), 'payload', /is a Map/],
    [
      'bytes inside an object',
      { 'file name': new Uint8Array(1) },
      'payload["file name"]',
      /is a Uint8Array/,
    ],
    ['nesting deeper than 1000 levels', deep, `payload${'[0]'.repeat(1_000)}`, /nesting deeper/],
  ])('refuses %s with a typed error naming where it is', (_name, payload, path, what) => {
    let error: unknown;
    try {
      fingerprint(payload as object);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(PayloadNotFingerprintableError);
    expect(error).toMatchObject({
      code: ErrorCodes.PAYLOAD_NOT_FINGERPRINTABLE,
      retriable: false,
      path,
    });
    expect((error as Error).message).toMatch(what);
  });
});
