import { describe, expect, it } from 'vitest';
import { jsonSerializer } from '../engine/serializer.js';
import { responseSerializer } from './responseSerializer.js';
import type { StoredResponse } from './storedResponse.js';

const envelopes: Record<string, StoredResponse> = {
  'JSON body': {
    status: 201,
    headers: [
      ['content-type', 'application/json'],
      ['location', '/orders/1'],
    ],
    body: new TextEncoder().encode('{"ok":true}'),
  },
  'binary body in a Buffer slice': {
    status: 200,
    headers: [],
    body: Buffer.from(Uint8Array.from({ length: 300 }, (_, i) => i % 256)).subarray(3, 290),
  },
  'empty body': { status: 204, headers: [['etag', '"v1"']], body: new Uint8Array(0) },
  'body omitted': { status: 200, headers: [['x', 'y']], bodyOmitted: 'too-large' },
  'headers that start with ~ or need escaping': {
    status: 200,
    headers: [
      ['link', '~/home'],
      ['~odd', 'quote " backslash \\ and \u00e9'],
    ],
    body: Uint8Array.of(126, 0, 255),
  },
  'gRPC reply with trailers and a status message': {
    status: 0,
    headers: [['x-region', 'eu']],
    trailers: [
      ['x-charge-id', 'ch_1'],
      ['x-trace-bin', '~AAE='],
    ],
    message: '~OK',
    body: Uint8Array.of(8, 150, 1),
  },
};

describe('responseSerializer', () => {
  it.each(Object.entries(envelopes))(
    'writes exactly what core’s serializer writes (%s) and reads back an equal envelope',
    (_name, envelope) => {
      const text = responseSerializer.serialize(envelope);
      expect(text).toBe(jsonSerializer.serialize(envelope));
      const back = responseSerializer.deserialize(text) as StoredResponse;
      expect(back.status).toBe(envelope.status);
      expect(back.headers).toEqual(envelope.headers);
      expect(back.bodyOmitted).toBe(envelope.bodyOmitted);
      expect(back.trailers).toEqual(envelope.trailers);
      expect(back.message).toBe(envelope.message);
      if (envelope.body)
        expect(new Uint8Array(back.body ?? [])).toEqual(new Uint8Array(envelope.body));
    },
  );

  it('leaves any other result to core’s serializer', () => {
    const other = { note: '~tilde', n: [1, 2] };
    expect(responseSerializer.serialize(other)).toBe(jsonSerializer.serialize(other));
    expect(responseSerializer.deserialize(jsonSerializer.serialize(other))).toEqual(other);
  });
});

describe('responseSerializer.deserialize', () => {
  it.each([
    ...Object.entries(envelopes).map(([name, envelope]) => [
      name,
      jsonSerializer.serialize(envelope),
    ]),
    ['an unknown tag in a header', '~1:{"status":200,"headers":[["a","~x:1"]],"body":"~b:AAE="}'],
    ['an extra field', '~1:{"status":200,"headers":[],"body":"~b:AAE=","extra":"~~y"}'],
    ['a body that is not bytes', '~1:{"status":200,"headers":[],"body":"~~plain"}'],
    ['headers that are not lines', '~1:{"status":200,"headers":{"a":"b"},"body":"~b:AAE="}'],
    ['plain JSON', '{"status":200,"headers":[]}'],
  ])('reads %s exactly as core’s serializer does (or fails as it does)', (_name, text) => {
    let expected: unknown;
    let expectedError: unknown;
    try {
      expected = jsonSerializer.deserialize(text);
    } catch (error) {
      expectedError = error;
    }
    if (expectedError !== undefined) {
      expect(() => responseSerializer.deserialize(text)).toThrow(
        String((expectedError as Error).message),
      );
    } else {
      expect(responseSerializer.deserialize(text)).toEqual(expected);
    }
  });
});
