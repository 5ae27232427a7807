import { describe, expect, it } from 'vitest';
import { ErrorCodes } from './codes.js';
import { isIdemqError } from './idemqError.js';
import { PublishFailedError, type PublishFailure } from './transport.js';

describe('PublishFailedError', () => {
  it('carries the failure, the destination and the requestId, with the publish code', () => {
    const cause = new Error('socket closed');
    const error = new PublishFailedError('not confirmed', {
      failure: 'unconfirmed',
      destination: 'payments',
      requestId: 'r-1',
      cause,
    });
    expect(isIdemqError(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'PublishFailedError',
      code: ErrorCodes.PUBLISH_FAILED,
      failure: 'unconfirmed',
      destination: 'payments',
      requestId: 'r-1',
      retriable: true,
      cause,
    });
  });

  it('is retriable by default unless the broker can never take the message', () => {
    const retriable = (failure: PublishFailure) =>
      new PublishFailedError('x', { failure, destination: 'd' }).retriable;
    expect(retriable('too-large')).toBe(false);
    expect(retriable('unroutable')).toBe(false);
    expect(retriable('nacked')).toBe(true);
    expect(retriable('unconfirmed')).toBe(true);
    expect(retriable('refused')).toBe(true);
  });

  it('lets the adapter say whether a refusal is retriable, and subclasses keep the class', () => {
    const refused = new PublishFailedError('access denied', {
      failure: 'refused',
      destination: 'orders',
      retriable: false,
    });
    expect(refused.retriable).toBe(false);
    expect(refused.requestId).toBeUndefined();

    class TooLarge extends PublishFailedError {
      constructor(readonly bytes: number) {
        super(`${bytes} bytes`, { failure: 'too-large', destination: 'orders' });
      }
    }
    const tooLarge = new TooLarge(300);
    expect(tooLarge).toBeInstanceOf(PublishFailedError);
    expect(tooLarge).toMatchObject({ name: 'TooLarge', failure: 'too-large', bytes: 300 });
  });
});
