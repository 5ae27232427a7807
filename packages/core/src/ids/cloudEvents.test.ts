import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { InvalidRequestIdError } from '../errors/message.js';
import { cloudEventIdentity, cloudEventsRequestId, requestIdOfCloudEvent } from './cloudEvents.js';

describe('cloudEventsRequestId', () => {
  it('joins source and id, prefixed with the byte length of the source', () => {
    expect(cloudEventsRequestId('/orders', 'A-1')).toBe('ce:7:/orders:A-1');
    expect(cloudEventsRequestId('urn:é', '1')).toBe('ce:6:urn:é:1');
  });

  it('gives distinct ids to pairs whose plain concatenations are equal', () => {
    const pairs: [string, string][] = [
      ['a:b', 'c'],
      ['a', 'b:c'],
      ['a:', 'b:c'],
      ['a:b:', 'c'],
      ['1:a', 'b'],
      ['a', '1:b'],
    ];
    const ids = pairs.map(([source, id]) => cloudEventsRequestId(source, id));
    expect(new Set(ids).size).toBe(pairs.length);
  });

  it('is the same for the same pair, whatever else the event carries', () => {
    expect(cloudEventsRequestId('/s', 'x')).toBe(cloudEventsRequestId('/s', 'x'));
    expect(cloudEventsRequestId('/s', 'x')).not.toBe(cloudEventsRequestId('/t', 'x'));
  });

  it('over the size limit, hashes the joined text into a fixed 74-byte id', () => {
    const source = `https://example.com/${'s'.repeat(600)}`;
    const id = cloudEventsRequestId(source, 'e-1');
    expect(id).toMatch(/^ce-sha256:[0-9a-f]{64}$/);
    expect(cloudEventsRequestId(source, 'e-1')).toBe(id);
    expect(cloudEventsRequestId(source, 'e-2')).not.toBe(id);
    // Exactly at the limit the joined text is kept; one byte over, it is hashed.
    const joined = cloudEventsRequestId('/s', 'x'.repeat(10));
    expect(cloudEventsRequestId('/s', 'x'.repeat(10), joined.length)).toBe(joined);
    expect(cloudEventsRequestId('/s', 'x'.repeat(10), joined.length - 1)).toMatch(/^ce-sha256:/);
  });

  it('refuses an empty part or a lone surrogate (which would collide once hashed)', () => {
    expect(() => cloudEventsRequestId('', 'x')).toThrow(InvalidRequestIdError);
    expect(() => cloudEventsRequestId('/s', '')).toThrow(/id must be a non-empty string/);
    expect(() => cloudEventsRequestId('/s', 'a\uD800')).toThrow(/lone surrogate/);
  });

  it('refuses a control character in either part, also when the pair would be hashed', () => {
    expect(() => cloudEventsRequestId('/s', 'a\nb')).toThrow(/id contains a control character/);
    const long = `/${'s'.repeat(600)}`;
    expect(() => cloudEventsRequestId(`${long}\u0000`, 'e-1')).toThrow(
      expect.objectContaining({ code: ErrorCodes.REQUEST_ID_INVALID }),
    );
  });
});

describe('requestIdOfCloudEvent', () => {
  it('decodes byte values strictly and joins them', () => {
    const identity = { id: Buffer.from('e-1'), source: Buffer.from('/orders') };
    expect(requestIdOfCloudEvent(identity, 512)).toBe('ce:7:/orders:e-1');
  });

  it.each([
    [{ id: 'e-1', source: undefined }, ErrorCodes.REQUEST_ID_MISSING, /no source/],
    [{ id: undefined, source: '/s' }, ErrorCodes.REQUEST_ID_MISSING, /no id/],
    [{ id: '', source: '/s' }, ErrorCodes.REQUEST_ID_MISSING, /no id/],
    [{ id: 42, source: '/s' }, ErrorCodes.REQUEST_ID_INVALID, /id must be a string/],
    [{ id: new Uint8Array([0xff]), source: '/s' }, ErrorCodes.REQUEST_ID_INVALID, /UTF-8/],
  ])('refuses %j with a typed error', (identity, code, message) => {
    let thrown: unknown;
    try {
      requestIdOfCloudEvent(identity, 512);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidRequestIdError);
    expect((thrown as InvalidRequestIdError).code).toBe(code);
    expect((thrown as Error).message).toMatch(message);
  });

  it('a hashed id still has to fit a tiny maxRequestIdBytes', () => {
    expect(() => requestIdOfCloudEvent({ id: 'e', source: '/s'.repeat(40) }, 16)).toThrow(
      expect.objectContaining({ code: ErrorCodes.REQUEST_ID_TOO_LONG }),
    );
  });
});

describe('cloudEventIdentity', () => {
  it('is undefined when neither part was found, the parts as found otherwise', () => {
    expect(cloudEventIdentity(undefined, undefined)).toBeUndefined();
    expect(cloudEventIdentity('x', undefined)).toEqual({ id: 'x', source: undefined });
  });
});
