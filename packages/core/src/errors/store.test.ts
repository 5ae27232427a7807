import { describe, expect, it } from 'vitest';
import { ErrorCodes } from './codes.js';
import { IdemqError, isIdemqError } from './idemqError.js';
import { refusesRecord, StoreRejectedError, StoreUnavailableError } from './store.js';

describe('store errors', () => {
  it('StoreUnavailableError is retriable and says why, "other" when the store does not know', () => {
    const cause = new Error('OOM command not allowed');
    const full = new StoreUnavailableError('Redis is full', { reason: 'out-of-memory', cause });
    expect(full).toMatchObject({
      name: 'StoreUnavailableError',
      code: ErrorCodes.STORE_UNAVAILABLE,
      retriable: true,
      reason: 'out-of-memory',
      cause,
    });
    expect(new StoreUnavailableError('down').reason).toBe('other');
  });

  it('StoreRejectedError is not retriable and says what it holds for', () => {
    const error = new StoreRejectedError('WRONGTYPE', { affects: 'record' });
    expect(isIdemqError(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'StoreRejectedError',
      code: ErrorCodes.STORE_REJECTED,
      retriable: false,
      affects: 'record',
    });
  });

  it('refusesRecord: only a refusal of one record, also from another copy of the package', () => {
    expect(refusesRecord(new StoreRejectedError('x', { affects: 'record' }))).toBe(true);
    expect(refusesRecord(new StoreRejectedError('x', { affects: 'store' }))).toBe(false);
    expect(refusesRecord(new StoreUnavailableError('x'))).toBe(false);
    expect(refusesRecord(new Error('WRONGTYPE'))).toBe(false);
    expect(refusesRecord(new IdemqError(ErrorCodes.STORE_REJECTED, 'no affects'))).toBe(false);
    // What a duplicated copy of core throws: same shape, another class.
    const foreign = Object.assign(new Error('x'), {
      code: 'IDEMQ_ERR_STORE_REJECTED',
      retriable: false,
      affects: 'record',
    });
    expect(refusesRecord(foreign)).toBe(true);
  });
});
