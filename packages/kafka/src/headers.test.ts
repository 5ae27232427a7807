import { describe, expect, it } from 'vitest';
import { KafkaHeaders, readHeaders, writeHeaders } from './headers.js';

const ID = KafkaHeaders.requestId;

describe('headers', () => {
  it('round-trips the requestId, content type and user headers', () => {
    const written = writeHeaders({ traceparent: 't', 'x-unicode': 'é ✓' }, ID, 'r-1', 'text/plain');
    const raw = Object.fromEntries(Object.entries(written).map(([k, v]) => [k, Buffer.from(v)]));
    expect(readHeaders(raw, ID)).toEqual({
      requestId: 'r-1',
      contentType: 'text/plain',
      headers: { traceparent: 't', 'x-unicode': 'é ✓' },
    });
  });

  it('reads the CloudEvents binary-mode ce_id and ce_source, leaving them visible as headers', () => {
    const read = readHeaders(
      { ce_id: Buffer.from('e-1'), ce_source: Buffer.from('/orders'), ce_type: Buffer.from('t') },
      ID,
    );
    expect(read.cloudEvent).toEqual({ id: 'e-1', source: '/orders' });
    expect(read.headers).toEqual({ ce_id: 'e-1', ce_source: '/orders', ce_type: 't' });
    expect(readHeaders({ ce_id: Buffer.from('e-2') }, ID).cloudEvent).toEqual({
      id: 'e-2',
      source: undefined,
    });
    expect(readHeaders({ traceparent: Buffer.from('t') }, ID).cloudEvent).toBeUndefined();
    const invalid = readHeaders({ ce_id: Buffer.from([0xff]), ce_source: 's' }, ID).cloudEvent;
    expect(invalid?.id).toBeInstanceOf(Uint8Array);
  });

  it('the requestId wins over a user header of the same name', () => {
    expect(writeHeaders({ [ID]: 'spoofed' }, ID, 'real', undefined)[ID]).toBe('real');
  });

  it('hands a bad requestId to the engine as found, never throwing', () => {
    expect(readHeaders({}, ID).requestId).toBeUndefined();
    expect(readHeaders({ [ID]: Buffer.alloc(0) }, ID).requestId).toBe('');
    const invalid = readHeaders({ [ID]: Buffer.from([0xff, 0xfe]) }, ID).requestId;
    expect(invalid).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(invalid as Uint8Array)).toEqual(Buffer.from([0xff, 0xfe]));
    // Repeated: ambiguous, so not reduced to one of the values.
    expect(readHeaders({ [ID]: [Buffer.from('a'), Buffer.from('b')] }, ID).requestId).toEqual([
      Buffer.from('a'),
      Buffer.from('b'),
    ]);
  });

  it('hides retry-topic bookkeeping and keeps the last value of a repeated user header', () => {
    const read = readHeaders(
      {
        [KafkaHeaders.retryAttempt]: Buffer.from('2'),
        [KafkaHeaders.retryNotBefore]: Buffer.from('1'),
        tag: [Buffer.from('a'), Buffer.from('b')],
      },
      ID,
    );
    expect(read.headers).toEqual({ tag: 'b' });
  });
});
