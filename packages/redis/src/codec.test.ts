import { ErrorCodes } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { decodeClaim, decodeTransition } from './codec.js';

const rejectedRecord = { code: ErrorCodes.STORE_REJECTED, affects: 'record', retriable: false };

describe('decodeClaim', () => {
  it('reads a new claim and the 8-field outcomes', () => {
    expect(decodeClaim('1700000000123456', 't', 1_000)).toEqual({
      status: 'claimed',
      token: 't',
      fencingToken: 1700000000123456,
      attempt: 1,
      leaseExpiresAt: 1700000000123 + 1_000,
    });
    expect(decodeClaim(['duplicate', '1700000000123', '0', '', '', '', '', ''], 't', 1)).toEqual({
      status: 'duplicate',
      completedAt: 1700000000123,
    });
    expect(decodeClaim(['in-progress', '250', '2', '', '', '', '', ''], 't', 1)).toEqual({
      status: 'in-progress',
      retryAfterMs: 250,
      attempt: 2,
    });
  });

  it("a key's error element rejects with that record's typed error", () => {
    expect(() =>
      decodeClaim(
        ['error', 'WRONGTYPE Operation against a key holding the wrong kind of value'],
        't',
        1,
      ),
    ).toThrow(expect.objectContaining(rejectedRecord));
    expect(() =>
      decodeClaim(['error', "OOM command not allowed when used memory > 'maxmemory'."], 't', 1),
    ).toThrow(
      expect.objectContaining({ code: ErrorCodes.STORE_UNAVAILABLE, reason: 'out-of-memory' }),
    );
  });

  it('an element it cannot read is a refusal of the record, never a NaN outcome', () => {
    for (const reply of [
      'OK',
      null,
      ['weird'],
      ['duplicate', 'yesterday', '0', '', '', '', '', ''],
      ['in-progress', '250'],
      ['claimed', '', '1', '5'],
    ]) {
      expect(() => decodeClaim(reply, 't', 1), JSON.stringify(reply)).toThrow(
        expect.objectContaining(rejectedRecord),
      );
    }
  });
});

describe('decodeTransition', () => {
  it('1 is ok, 0 lease-lost, an error element or anything else a typed error', () => {
    expect(decodeTransition('complete', 1)).toBe('ok');
    expect(decodeTransition('complete', 0)).toBe('lease-lost');
    expect(() => decodeTransition('complete', ['error', 'user_script:9: bad'])).toThrow(
      expect.objectContaining(rejectedRecord),
    );
    for (const reply of ['1', 2, null, []]) {
      expect(() => decodeTransition('renew', reply), JSON.stringify(reply)).toThrow(
        expect.objectContaining(rejectedRecord),
      );
    }
  });
});
