import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResultNotSerializableError } from '../errors/store.js';
import { BYTES_FORMAT_PREFIX, jsonSerializer } from './serializer.js';

const { serialize, deserialize } = jsonSerializer;
const roundTrip = (value: unknown) => deserialize(serialize(value));
/** JSON values as JSON can hold them (fast-check may give -0, which JSON writes as 0). */
const jsonValue = (constraints?: Parameters<typeof fc.jsonValue>[0]) =>
  fc.jsonValue(constraints).map((value) => JSON.parse(JSON.stringify(value)) as unknown);

describe('jsonSerializer', () => {
  describe('plain results', () => {
    it('are written exactly as JSON.stringify writes them, so older readers still read them', () => {
      fc.assert(
        fc.property(jsonValue(), (value) => {
          expect(serialize(value)).toBe(JSON.stringify(value));
          expect(roundTrip(value)).toEqual(value);
        }),
        { numRuns: 500 },
      );
      expect(serialize(undefined)).toBe('null');
      expect(serialize('~b:3q0=')).toBe('"~b:3q0="');
    });

    it('a record written before bytes were supported reads as it always did', () => {
      // Plain JSON (no prefix) is read as JSON, even where it looks like a tag.
      expect(deserialize('{"0":222,"1":173}')).toEqual({ 0: 222, 1: 173 });
      expect(deserialize('"~b:3q0="')).toBe('~b:3q0=');
      expect(deserialize('{"a":"~~x","b":["~1:"]}')).toEqual({ a: '~~x', b: ['~1:'] });
    });
  });

  describe('bytes', () => {
    it('a Uint8Array replays as an equal Uint8Array', () => {
      const bytes = Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0, 255);
      const text = serialize(bytes);
      expect(text.startsWith(BYTES_FORMAT_PREFIX)).toBe(true);
      const back = deserialize(text);
      expect(back).toBeInstanceOf(Uint8Array);
      expect(back).toEqual(bytes);
      expect(roundTrip(new Uint8Array(0))).toEqual(new Uint8Array(0));
    });

    it('a Buffer replays as a Uint8Array of the same bytes; a view keeps only its own bytes', () => {
      const back = roundTrip(Buffer.from('héllo'));
      expect(back).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(back as Uint8Array).toString()).toBe('héllo');
      const whole = Uint8Array.of(1, 2, 3, 4, 5, 6);
      expect(roundTrip(whole.subarray(2, 4))).toEqual(Uint8Array.of(3, 4));
    });

    it('bytes nested in objects and arrays replay in place, beside strings that look like tags', () => {
      const response = {
        status: 201,
        headers: [['content-type', 'application/octet-stream']],
        body: Uint8Array.of(222, 173),
        parts: [Buffer.from([1, 2]), '~b:AQI=', '~', '~~', '~1:x', ''],
        tilde: { '~b:key': '~b:value' },
      };
      const back = roundTrip(response) as typeof response;
      expect(back).toEqual({
        ...response,
        parts: [Uint8Array.of(1, 2), '~b:AQI=', '~', '~~', '~1:x', ''],
      });
      expect(back.body).toBeInstanceOf(Uint8Array);
    });

    it('round-trips any JSON value with byte arrays anywhere in it', () => {
      const { tree } = fc.letrec((tie) => ({
        tree: fc.oneof(
          { depthSize: 'small' },
          jsonValue({ maxDepth: 1 }),
          fc.uint8Array({ maxLength: 40 }),
          fc.string({ unit: 'binary' }).map((s) => `~${s}`),
          fc.array(tie('tree'), { maxLength: 4 }),
          fc.dictionary(fc.string(), tie('tree'), { maxKeys: 4 }),
        ),
      }));
      fc.assert(
        fc.property(tree, (value) => {
          expect(roundTrip(value)).toEqual(value);
        }),
        { numRuns: 500 },
      );
    });

    it('a stored {"__proto__": …} beside bytes pollutes no prototype', () => {
      const hostile = JSON.parse('{"__proto__":{"polluted":1},"ok":true}') as object;
      const back = roundTrip({ hostile, body: Uint8Array.of(1) }) as {
        hostile: Record<string, unknown>;
      };
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getPrototypeOf(back.hostile)).toBe(Object.prototype);
      expect(Object.hasOwn(back.hostile, '__proto__')).toBe(true);
    });

    it.each([
      ['a Float64Array', () => Float64Array.of(1.5)],
      ['a DataView', () => new DataView(new ArrayBuffer(2))],
      ['an ArrayBuffer', () => new ArrayBuffer(2)],
      ['a nested Uint16Array', () => ({ body: Uint16Array.of(1) })],
    ])('refuses %s rather than storing a lossy object', (_n, make) => {
      expect(() => serialize(make())).toThrow(ResultNotSerializableError);
    });

    it('still refuses functions and symbols, in both forms', () => {
      expect(() => serialize({ f: () => 1 })).toThrow(ResultNotSerializableError);
      expect(() => serialize({ body: Uint8Array.of(1), f: () => 1 })).toThrow(
        ResultNotSerializableError,
      );
      expect(() => serialize({ body: Uint8Array.of(1), s: Symbol('x') })).toThrow(
        ResultNotSerializableError,
      );
    });

    it('a tagged text with an unknown tag is refused, not misread', () => {
      expect(() => deserialize(`${BYTES_FORMAT_PREFIX}"~z:abc"`)).toThrow(/unknown tag/);
    });
  });
});
