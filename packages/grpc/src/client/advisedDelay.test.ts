import { Metadata, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_METADATA } from '../refusals.js';
import { encodeRetryStatus, STATUS_DETAILS_KEY } from '../statusDetails.js';
import { advisedDelayMs } from './advisedDelay.js';

function metadataOf(entries: Record<string, string | Buffer>): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(entries)) metadata.set(name, value);
  return metadata;
}

const retryInfo = (delayMs: number) => encodeRetryStatus(status.ABORTED, 'busy', delayMs);

describe('advisedDelayMs', () => {
  it('reads the RetryInfo of grpc-status-details-bin', () => {
    expect(advisedDelayMs(metadataOf({ [STATUS_DETAILS_KEY]: retryInfo(1_500) }))).toBe(1_500);
    expect(advisedDelayMs(metadataOf({ [STATUS_DETAILS_KEY]: retryInfo(0) }))).toBe(0);
  });

  it('reads retry-after-ms from the trailers, then from the headers', () => {
    expect(advisedDelayMs(metadataOf({ [RETRY_AFTER_METADATA]: '250' }))).toBe(250);
    expect(advisedDelayMs(new Metadata(), metadataOf({ [RETRY_AFTER_METADATA]: '40' }))).toBe(40);
    expect(
      advisedDelayMs(
        metadataOf({ [RETRY_AFTER_METADATA]: '7' }),
        metadataOf({ [RETRY_AFTER_METADATA]: '40' }),
      ),
    ).toBe(7);
  });

  it('prefers RetryInfo to retry-after-ms', () => {
    const trailers = metadataOf({
      [STATUS_DETAILS_KEY]: retryInfo(300),
      [RETRY_AFTER_METADATA]: '9',
    });
    expect(advisedDelayMs(trailers)).toBe(300);
  });

  it('falls back to retry-after-ms when the status details carry no RetryInfo', () => {
    const trailers = metadataOf({
      [STATUS_DETAILS_KEY]: Buffer.from([0x08, 0x0a]), // a Status with a code and no details
      [RETRY_AFTER_METADATA]: '9',
    });
    expect(advisedDelayMs(trailers)).toBe(9);
  });

  it('advises nothing when there is no hint or it is malformed', () => {
    expect(advisedDelayMs(new Metadata(), new Metadata())).toBeUndefined();
    for (const bad of ['', '-1', '1.5', '1e3', ' 12', 'soon', '99999999999999999999']) {
      expect(advisedDelayMs(metadataOf({ [RETRY_AFTER_METADATA]: bad })), bad).toBeUndefined();
    }
    expect(
      advisedDelayMs(metadataOf({ [STATUS_DETAILS_KEY]: Buffer.from([0xff, 0xff]) })),
    ).toBeUndefined();
  });
});
