import { PublishFailedError as CorePublishFailedError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { sqsError } from '../test/fakeClient.js';
import {
  DelayTooLongError,
  describeError,
  isFatal,
  isReceiptGone,
  isTransient,
  PayloadTooLargeError,
  PublishFailedError,
} from './errors.js';

/** An SDK service exception as the client throws it. */
function fault(name: string, side: 'client' | 'server', retryable = false): Error {
  return Object.assign(sqsError(name), {
    $fault: side,
    ...(retryable ? { $retryable: { throttling: true } } : {}),
  });
}

describe('errors', () => {
  it('carries stable codes and typed fields', () => {
    expect(new DelayTooLongError(5, 4)).toMatchObject({
      code: 'IDEMQ_ERR_DELAY_TOO_LONG',
      retriable: false,
      delayMs: 5,
      maxDelayMs: 4,
    });
    const tooLarge = new PayloadTooLargeError('orders', 300, 200);
    expect(tooLarge).toBeInstanceOf(PublishFailedError);
    expect(PublishFailedError).toBe(CorePublishFailedError);
    expect(tooLarge).toMatchObject({
      code: 'IDEMQ_ERR_PUBLISH_FAILED',
      retriable: false,
      destination: 'orders',
      failure: 'too-large',
      bytes: 300,
      maxBytes: 200,
    });
  });

  it('tells a stale receipt handle from other failures', () => {
    expect(isReceiptGone('ReceiptHandleIsInvalid')).toBe(true);
    expect(isReceiptGone(sqsError('MessageNotInflight'))).toBe(true);
    expect(
      isReceiptGone(
        sqsError(
          'InvalidParameterValue',
          'Value x for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.',
        ),
      ),
    ).toBe(true);
    expect(isReceiptGone(sqsError('InvalidParameterValue', 'VisibilityTimeout too large'))).toBe(
      false,
    );
    expect(isReceiptGone(sqsError('InternalError'))).toBe(false);
  });

  it('classifies SDK errors: fatal, transient or the request’s own fault', () => {
    expect(isFatal(sqsError('QueueDoesNotExist'))).toBe(true);
    expect(isTransient(sqsError('QueueDoesNotExist'))).toBe(false);
    expect(isTransient(fault('InternalError', 'server'))).toBe(true);
    expect(isTransient(fault('RequestThrottled', 'client', true))).toBe(true);
    expect(isTransient(fault('InvalidMessageContents', 'client'))).toBe(false);
    expect(isTransient(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      true,
    );
    expect(
      describeError(sqsError('QueueDoesNotExist', 'The specified queue does not exist.')),
    ).toBe('QueueDoesNotExist: The specified queue does not exist.');
  });
});
