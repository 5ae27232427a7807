import { describe, expect, it } from 'vitest';
import { jsonSerializer } from '../engine/serializer.js';
import { allowListedLines, isStoredResponse, type StoredResponse } from './storedResponse.js';

describe('the stored response', () => {
  const stored: StoredResponse = {
    status: 6,
    headers: [['content-type', 'application/grpc']],
    trailers: [['x-id', '7']],
    message: 'payment exists',
    body: new Uint8Array([0, 255, 1, 128]),
  };

  it('survives the core serializer with its bytes, trailers and message intact', () => {
    const back = jsonSerializer.deserialize(jsonSerializer.serialize(stored));
    expect(isStoredResponse(back)).toBe(true);
    expect(back).toEqual(stored);
  });

  it.each([
    undefined,
    'text',
    { status: '200', headers: [] },
    { status: 200.5, headers: [] },
    { status: 200, headers: [['a']] },
    { status: 200, headers: [], trailers: [['a', 1]] },
    { status: 200, headers: [], message: 3 },
    { status: 200, headers: [], body: [1, 2] },
    { status: 200, headers: [], bodyOmitted: 'lost' },
  ])('does not take %j for a stored response', (value) => {
    expect(isStoredResponse(value)).toBe(false);
  });

  it('keeps the allow-listed lines in order, names in lower case, repeats apart', () => {
    const lines: [string, string][] = [
      ['Set-Cookie', 'a=1'],
      ['X-Secret', 's'],
      ['set-cookie', 'b=2'],
      ['Content-Type', 'text/plain'],
    ];
    expect(allowListedLines(lines, new Set(['set-cookie', 'content-type']))).toEqual([
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['content-type', 'text/plain'],
    ]);
  });
});
