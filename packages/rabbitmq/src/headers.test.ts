import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { attemptOf, copyOptions, InternalHeaders, toIncoming } from './headers.js';

function message(
  properties: Record<string, unknown> = {},
  redelivered = false,
  content = Buffer.from('{}'),
): ConsumeMessage {
  return {
    content,
    fields: { deliveryTag: 1, redelivered, exchange: 'x', routingKey: '', consumerTag: 'c' },
    properties: { headers: {}, ...properties } as MessageProperties,
  };
}

describe('attemptOf', () => {
  it('quorum: the stamped attempt plus every return the broker counted (exact)', () => {
    expect(attemptOf(message(), 'quorum')).toEqual({ attempt: 1, exact: true });
    expect(attemptOf(message({ headers: { 'x-delivery-count': 2 } }, true), 'quorum')).toEqual({
      attempt: 3,
      exact: true,
    });
    const copy = message({ headers: { [InternalHeaders.attempt]: 4, 'x-delivery-count': 1 } });
    expect(attemptOf(copy, 'quorum')).toEqual({ attempt: 5, exact: true });
  });

  it('classic: the stamped attempt, plus one when the broker flags a redelivery (an estimate)', () => {
    expect(attemptOf(message(), 'classic')).toEqual({ attempt: 1, exact: false });
    expect(attemptOf(message({}, true), 'classic')).toEqual({ attempt: 2, exact: false });
    const copy = message({ headers: { [InternalHeaders.attempt]: '3' } });
    expect(attemptOf(copy, 'classic')).toEqual({ attempt: 3, exact: false });
  });

  it('ignores a stamp that is not a positive integer', () => {
    const odd = message({ headers: { [InternalHeaders.attempt]: 'many' } });
    expect(attemptOf(odd, 'classic').attempt).toBe(1);
    expect(
      attemptOf(message({ headers: { [InternalHeaders.attempt]: -3 } }), 'quorum').attempt,
    ).toBe(1);
  });
});

describe('toIncoming', () => {
  it('maps properties: requestId, headers as strings, key, content type, publish time', () => {
    const incoming = toIncoming(
      message({
        messageId: 'r-1',
        contentType: 'application/json',
        timestamp: 1_700_000_000,
        headers: {
          traceparent: 't',
          retries: 3,
          flag: true,
          bytes: Buffer.from('text'),
          binary: Buffer.from([0xff]),
          table: { a: 1 },
          'x-death': [{ count: 1 }],
          'x-first-death-reason': 'expired',
          'x-delivery-count': 1,
          [InternalHeaders.key]: 'k',
          [InternalHeaders.attempt]: 2,
        },
      }),
      'payments',
      'classic',
    );
    expect(incoming).toMatchObject({
      requestId: 'r-1',
      source: 'payments',
      key: 'k',
      contentType: 'application/json',
      publishedAt: 1_700_000_000_000,
      attempt: 2,
      attemptSource: 'emulated',
      redelivered: true, // a copy the transport made was delivered before
    });
    expect(incoming.headers).toEqual({
      traceparent: 't',
      retries: '3',
      flag: 'true',
      bytes: 'text',
    });
  });

  it('takes the requestId from the header fallback, bytes as bytes, else passes the raw value', () => {
    const header = (value: unknown) =>
      toIncoming(message({ headers: { [InternalHeaders.requestId]: value } }), 's', 'quorum')
        .requestId;
    expect(header('long-id')).toBe('long-id');
    expect(header(Buffer.from([0xc3, 0x28]))).toEqual(new Uint8Array([0xc3, 0x28]));
    expect(toIncoming(message(), 's', 'quorum').requestId).toBeUndefined();
    expect(toIncoming(message({ messageId: '' }), 's', 'quorum').requestId).toBe('');
  });

  it('reads the CloudEvents id and source under one separator, cloudEvents_ before cloudEvents:', () => {
    const ce = (headers: Record<string, unknown>) =>
      toIncoming(message({ headers }), 's', 'quorum').cloudEvent;
    expect(ce({ cloudEvents_id: 'e-1', cloudEvents_source: '/orders' })).toEqual({
      id: 'e-1',
      source: '/orders',
    });
    expect(ce({ 'cloudEvents:id': 'e-2', 'cloudEvents:source': '/legacy' })).toEqual({
      id: 'e-2',
      source: '/legacy',
    });
    // Never one name of each separator: the underscore pair, missing its source, is what counts.
    expect(ce({ cloudEvents_id: 'e-3', 'cloudEvents:source': '/other' })).toEqual({
      id: 'e-3',
      source: undefined,
    });
    expect(ce({ cloudEvents_id: Buffer.from('e-4'), cloudEvents_source: 's' })?.id).toEqual(
      Buffer.from('e-4'),
    );
    expect(ce({ traceparent: 't' })).toBeUndefined();
    const visible = toIncoming(
      message({ headers: { cloudEvents_id: 'e-1', cloudEvents_source: '/o' } }),
      's',
      'quorum',
    ).headers;
    expect(visible).toEqual({ cloudEvents_id: 'e-1', cloudEvents_source: '/o' });
  });

  it('a first delivery is not redelivered; a broker redelivery is', () => {
    expect(toIncoming(message(), 's', 'quorum').redelivered).toBe(false);
    expect(toIncoming(message({}, true), 's', 'quorum').redelivered).toBe(true);
  });
});

describe('copyOptions', () => {
  it('keeps the message, drops the broker history, expiration and userId, applies changes', () => {
    const original = message({
      messageId: 'r-1',
      contentType: 'text/plain',
      correlationId: 'c',
      expiration: '1000',
      userId: 'alice',
      timestamp: 5,
      headers: {
        app: 'x',
        'x-death': [],
        'x-delivery-count': 3,
        'x-first-death-queue': 'q',
        [InternalHeaders.notBefore]: 99,
      },
    });
    const options = copyOptions(original, {
      set: { [InternalHeaders.attempt]: 2 },
      drop: [InternalHeaders.notBefore],
    });
    expect(options).toEqual({
      persistent: true,
      mandatory: true,
      messageId: 'r-1',
      contentType: 'text/plain',
      correlationId: 'c',
      timestamp: 5,
      headers: { app: 'x', [InternalHeaders.attempt]: 2 },
    });
  });
});
