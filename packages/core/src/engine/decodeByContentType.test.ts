import { describe, expect, it } from 'vitest';
import { bodyKindOf, decodeByContentType, parseMediaType } from './decodeByContentType.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');

describe('decodeByContentType: the decision table', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['   ', 'json'],
    ['application/json', 'json'],
    ['Application/JSON; charset=utf-8', 'json'],
    ['application/cloudevents+json', 'json'],
    ['application/problem+json;charset=UTF-8', 'json'],
    ['application/vnd.acme.order.v2+json', 'json'],
    ['text/plain', 'text'],
    ['text/csv; charset=utf-8', 'text'],
    ['TEXT/HTML', 'text'],
    ['text/json', 'text'],
    ['application/octet-stream', 'bytes'],
    ['application/x-protobuf', 'bytes'],
    ['application/avro', 'bytes'],
    ['application/xml', 'bytes'],
    ['image/png', 'bytes'],
    ['application/jsonl', 'bytes'],
    ['application/json-seq', 'bytes'],
    ['json', 'bytes'],
    ['text', 'bytes'],
    ['text/', 'bytes'],
    ['/json', 'bytes'],
    ['application/ json', 'bytes'],
  ] as const)('%j reads as %s', (contentType, kind) => {
    expect(bodyKindOf(parseMediaType(contentType))).toBe(kind);
  });

  it('parses the essence and charset, ignoring other parameters and quotes', () => {
    expect(parseMediaType(' Text/Plain ; format=flowed; Charset="ISO-8859-1" ')).toEqual({
      essence: 'text/plain',
      charset: 'iso-8859-1',
    });
    expect(parseMediaType('application/json')).toEqual({ essence: 'application/json' });
    expect(parseMediaType('; charset=utf-8')).toBeUndefined();
  });
});

describe('decodeByContentType: decoding', () => {
  it('parses JSON when there is no content type (what idemq publishes for strings and bytes)', () => {
    expect(decodeByContentType(utf8('{"n":1}'))).toEqual({ n: 1 });
    expect(decodeByContentType(utf8('"hi"'), undefined)).toBe('hi');
  });

  it('parses JSON for application/json and +json types', () => {
    expect(decodeByContentType(utf8('[1,2]'), 'application/json')).toEqual([1, 2]);
    expect(decodeByContentType(utf8('{"a":true}'), 'application/cloudevents+json')).toEqual({
      a: true,
    });
  });

  it('returns text/* bodies as strings, not parsed', () => {
    expect(decodeByContentType(utf8('hello, world'), 'text/plain')).toBe('hello, world');
    expect(decodeByContentType(utf8('{"n":1}'), 'text/plain; charset=utf-8')).toBe('{"n":1}');
    expect(decodeByContentType(utf8(''), 'text/plain')).toBe('');
  });

  it('honours a charset the Encoding Standard knows, for text and JSON', () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
    expect(decodeByContentType(latin1, 'text/plain; charset=iso-8859-1')).toBe('café');
    const utf16 = Buffer.from('"ü"', 'utf16le');
    expect(decodeByContentType(utf16, 'application/json; charset=utf-16le')).toBe('ü');
  });

  it('strips a UTF-8 byte order mark, as the JSON decoder did before', () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"n":2}')]);
    expect(decodeByContentType(bom, 'application/json')).toEqual({ n: 2 });
  });

  it('returns other bodies as the very bytes delivered', () => {
    const body = Buffer.from([0x00, 0xff, 0x10]);
    expect(decodeByContentType(body, 'application/octet-stream')).toBe(body);
    const plain = new Uint8Array([1, 2, 3]);
    expect(decodeByContentType(plain, 'application/x-protobuf')).toBe(plain);
    expect(decodeByContentType(utf8('not json'), 'json')).toEqual(utf8('not json'));
  });

  it('refuses text that is not valid in its charset, instead of replacing it', () => {
    const invalid = Buffer.from([0x61, 0xff, 0x62]);
    expect(() => decodeByContentType(invalid, 'text/plain')).toThrow(TypeError);
    expect(() => decodeByContentType(invalid)).toThrow(TypeError);
  });

  it('refuses an unknown charset, naming it', () => {
    expect(() => decodeByContentType(utf8('x'), 'text/plain; charset=klingon')).toThrow(
      /unsupported charset "klingon"/,
    );
  });

  it('refuses malformed JSON under a JSON content type', () => {
    expect(() => decodeByContentType(utf8('{"n":'), 'application/json')).toThrow(SyntaxError);
    expect(() => decodeByContentType(utf8('plain words'))).toThrow(SyntaxError);
  });
});
