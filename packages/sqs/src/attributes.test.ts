import type { Message } from '@aws-sdk/client-sqs';
import { WireNames } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import {
  Attributes,
  DECODE_ERROR_HEADER,
  deadLetterAttributes,
  decodeWireBody,
  encodeWireBody,
  FormerAttributes,
  MAX_ATTRIBUTES,
  packAttributes,
  sqsId,
  unpackMessage,
  wireSize,
} from './attributes.js';

/** What SQS hands back for a message sent with these attributes. */
function received(body: string, attributes: Message['MessageAttributes']): Message {
  return { MessageId: 'm-1', Body: body, MessageAttributes: attributes };
}

function roundTrip(bytes: Uint8Array) {
  const wire = encodeWireBody(bytes);
  const attributes = packAttributes({ requestId: 'r-1', headers: {} }, wire);
  return { wire, unpacked: unpackMessage(received(wire.text, attributes)) };
}

describe('body encoding', () => {
  it('sends valid UTF-8 text as is, readable by any consumer', () => {
    const text = 'héllo wörld ✓ 😀\n\t{"a":1}';
    const { wire, unpacked } = roundTrip(Buffer.from(text, 'utf8'));
    expect(wire).toEqual({ text, encoding: undefined });
    expect(Buffer.from(unpacked.body).toString('utf8')).toBe(text);
  });

  it('sends bytes that are not valid UTF-8 as base64 and gets them back exactly', () => {
    const bytes = Uint8Array.from([0, 1, 2, 0x7f, 0x80, 0xfe, 0xff]);
    const { wire, unpacked } = roundTrip(bytes);
    expect(wire.encoding).toBe('base64');
    expect(Buffer.from(unpacked.body)).toEqual(Buffer.from(bytes));
  });

  it('base64-encodes valid UTF-8 holding characters SQS refuses (NUL, other controls, U+FFFE)', () => {
    for (const text of ['a\u0000b', 'bell\u0007', 'x\uFFFE']) {
      const { wire, unpacked } = roundTrip(Buffer.from(text, 'utf8'));
      expect(wire.encoding, JSON.stringify(text)).toBe('base64');
      expect(Buffer.from(unpacked.body).toString('utf8')).toBe(text);
    }
  });

  it('keeps a byte-order mark instead of dropping it', () => {
    const bytes = Buffer.from('\uFEFFbom', 'utf8');
    expect(Buffer.from(roundTrip(bytes).unpacked.body)).toEqual(bytes);
  });

  it('carries an empty body (SQS needs at least one character) as a marked placeholder', () => {
    const { wire, unpacked } = roundTrip(new Uint8Array(0));
    expect(wire.encoding).toBe('empty');
    expect(wire.text.length).toBeGreaterThan(0);
    expect(unpacked.body).toHaveLength(0);
  });

  it('reports a body marked base64 that is not base64, and an unknown encoding, without throwing', () => {
    expect(decodeWireBody('!!not base64!!', 'base64').error).toMatch(/not base64/);
    expect(decodeWireBody('abc', 'rot13').error).toMatch(/unknown body encoding/);
    const unpacked = unpackMessage(
      received('%%%', {
        [Attributes.requestId]: { DataType: 'String', StringValue: 'r-1' },
        [Attributes.bodyEncoding]: { DataType: 'String', StringValue: 'base64' },
      }),
    );
    expect(unpacked.headers[DECODE_ERROR_HEADER]).toMatch(/not base64/);
    expect(Buffer.from(unpacked.body).toString()).toBe('%%%');
  });
});

describe('attributes', () => {
  it('packs any number of headers into one attribute: never over the 10-attribute limit', () => {
    const headers = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`h-${i}`, `v${i}`]));
    const attributes = packAttributes(
      { requestId: 'r-1', headers, contentType: 'application/json', key: 'k' },
      encodeWireBody(Uint8Array.from([0xff])),
    );
    expect(Object.keys(attributes).length).toBeLessThanOrEqual(5);
    const unpacked = unpackMessage(received('/w==', attributes));
    expect(unpacked).toMatchObject({
      requestId: 'r-1',
      headers,
      contentType: 'application/json',
      key: 'k',
      foreign: false,
    });
  });

  it('leaves out empty content types and keys (SQS refuses empty attribute values)', () => {
    const attributes = packAttributes(
      { requestId: 'r', headers: {}, contentType: '', key: '' },
      encodeWireBody(Buffer.from('x')),
    );
    expect(Object.keys(attributes)).toEqual([Attributes.requestId]);
  });

  it('reads a message of another producer: its attributes become headers, binary ones are skipped', () => {
    const unpacked = unpackMessage(
      received('{"a":1}', {
        traceparent: { DataType: 'String', StringValue: '00-abc-01' },
        count: { DataType: 'Number', StringValue: '3' },
        blob: { DataType: 'Binary', BinaryValue: Uint8Array.from([1]) },
      }),
    );
    expect(unpacked).toMatchObject({
      requestId: undefined,
      foreign: true,
      headers: { traceparent: '00-abc-01', count: '3' },
    });
    expect(unpacked.headers).not.toHaveProperty('blob');
  });

  it('reports packed headers that are not a JSON object of strings', () => {
    for (const bad of ['nope', '[1]', '{"a":1}']) {
      const unpacked = unpackMessage(
        received('x', {
          [Attributes.requestId]: { DataType: 'String', StringValue: 'r' },
          [Attributes.headers]: { DataType: 'String', StringValue: bad },
        }),
      );
      expect(unpacked.headers[DECODE_ERROR_HEADER], bad).toMatch(/JSON object of strings/);
    }
  });

  it('dead-letter copies add the reason headers and stay within 10 attributes', () => {
    const foreign = Object.fromEntries(
      Array.from({ length: 9 }, (_, i) => [`f${i}`, { DataType: 'String', StringValue: `v${i}` }]),
    );
    const original = received('body', {
      ...foreign,
      [Attributes.requestId]: { DataType: 'String', StringValue: 'r-1' },
    });
    const copy = deadLetterAttributes(original, { 'x-idemq-reason': 'boom' });
    expect(Object.keys(copy).length).toBeLessThanOrEqual(MAX_ATTRIBUTES);
    const unpacked = unpackMessage(received('body', copy));
    expect(unpacked.requestId).toBe('r-1');
    expect(unpacked.headers).toMatchObject({ f0: 'v0', f8: 'v8', 'x-idemq-reason': 'boom' });
  });

  it('dead-letter copies keep the original packed headers', () => {
    const attributes = packAttributes(
      { requestId: 'r', headers: { a: '1' } },
      encodeWireBody(Buffer.from('x')),
    );
    const copy = deadLetterAttributes(received('x', attributes), { 'x-idemq-code': 'C' });
    expect(unpackMessage(received('x', copy)).headers).toEqual({ a: '1', 'x-idemq-code': 'C' });
  });

  it("writes core's wire names", () => {
    const attributes = packAttributes(
      { requestId: 'r', headers: { a: '1' }, contentType: 'text/plain', key: 'k' },
      encodeWireBody(Uint8Array.from([0xff])),
    );
    expect(Object.keys(attributes).sort()).toEqual(
      [
        WireNames.requestId,
        WireNames.headers,
        WireNames.contentType,
        WireNames.key,
        WireNames.bodyEncoding,
      ].sort(),
    );
  });

  it('reads a message sent before the upgrade, under the former attribute names', () => {
    const text = (value: string) => ({ DataType: 'String', StringValue: value });
    const unpacked = unpackMessage(
      received(Buffer.from([0xff, 0x00]).toString('base64'), {
        [FormerAttributes.requestId]: text('r-old'),
        [FormerAttributes.headers]: text('{"a":"1"}'),
        [FormerAttributes.contentType]: text('application/octet-stream'),
        [FormerAttributes.key]: text('k'),
        [FormerAttributes.bodyEncoding]: text('base64'),
        traceparent: text('00-abc-01'),
      }),
    );
    expect(unpacked).toMatchObject({
      requestId: 'r-old',
      foreign: false,
      contentType: 'application/octet-stream',
      key: 'k',
    });
    // The former names are idemq's own: never handed to the handler as headers.
    expect(unpacked.headers).toEqual({ a: '1', traceparent: '00-abc-01' });
    expect(Buffer.from(unpacked.body)).toEqual(Buffer.from([0xff, 0x00]));
  });

  it('dead-letters a message sent before the upgrade under the current names', () => {
    const text = (value: string) => ({ DataType: 'String', StringValue: value });
    const original = received('x', {
      [FormerAttributes.requestId]: text('r-old'),
      [FormerAttributes.headers]: text('{"a":"1"}'),
      [FormerAttributes.key]: text('k'),
    });
    const copy = deadLetterAttributes(original, { 'x-idemq-code': 'C' });
    expect(Object.keys(copy).sort()).toEqual(
      [Attributes.requestId, Attributes.headers, Attributes.key].sort(),
    );
    expect(unpackMessage(received('x', copy))).toMatchObject({
      requestId: 'r-old',
      key: 'k',
      headers: { a: '1', 'x-idemq-code': 'C' },
    });
  });

  it('counts the size as SQS does: body plus each attribute name, type and value', () => {
    const attributes = { ab: { DataType: 'String', StringValue: 'é' } };
    expect(wireSize('xyz', attributes)).toBe(3 + 2 + 6 + 2);
  });
});

describe('sqsId', () => {
  it('keeps ids SQS accepts and hashes the others to 64 hex characters', () => {
    expect(sqsId('01a2-b3_c.d:e')).toBe('01a2-b3_c.d:e');
    for (const id of ['with space', 'é', 'x'.repeat(129), '']) {
      expect(sqsId(id), JSON.stringify(id)).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(sqsId('é')).toBe(sqsId('é'));
    expect(sqsId('é')).not.toBe(sqsId('è'));
  });
});

describe('messages of other producers', () => {
  const text = (value: string) => ({ DataType: 'String', StringValue: value });

  it('reads the CloudEvents ce_id and ce_source attributes, leaving them visible as headers', () => {
    const unpacked = unpackMessage(
      received('hi', { ce_id: text('e-1'), ce_source: text('/orders'), ce_type: text('t') }),
    );
    expect(unpacked.cloudEvent).toEqual({ id: 'e-1', source: '/orders' });
    expect(unpacked.headers).toEqual({ ce_id: 'e-1', ce_source: '/orders', ce_type: 't' });
    expect(unpackMessage(received('hi', { other: text('x') })).cloudEvent).toBeUndefined();
    const binary = unpackMessage(
      received('hi', { ce_id: { DataType: 'Binary', BinaryValue: Buffer.from('e-2') } }),
    ).cloudEvent;
    expect(binary).toEqual({ id: Buffer.from('e-2'), source: undefined });
  });

  it("takes the content type from idemq's attribute, else content-type, else ce_datacontenttype", () => {
    const typeOf = (attributes: Message['MessageAttributes']) =>
      unpackMessage(received('x', attributes)).contentType;
    expect(typeOf({})).toBeUndefined();
    expect(typeOf({ ce_datacontenttype: text('text/csv') })).toBe('text/csv');
    expect(
      typeOf({ 'content-type': text('text/plain'), ce_datacontenttype: text('text/csv') }),
    ).toBe('text/plain');
    expect(
      typeOf({ [Attributes.contentType]: text('application/json'), 'content-type': text('x/y') }),
    ).toBe('application/json');
  });
});
