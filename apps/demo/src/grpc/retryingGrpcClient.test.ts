import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { retryAfterMs } from './retryingGrpcClient.js';

function metadataWith(value: string): Metadata {
  const metadata = new Metadata();
  metadata.set('retry-after-ms', value);
  return metadata;
}

describe('retryAfterMs', () => {
  it('reads the advised delay in milliseconds', () => {
    expect(retryAfterMs(metadataWith('250'))).toBe(250);
    expect(retryAfterMs(metadataWith('0'))).toBe(0);
  });

  it('ignores a missing entry and anything but a whole number', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(new Metadata())).toBeUndefined();
    for (const bad of ['', '-1', '1.5', 'soon', '99999999999999999999']) {
      expect(retryAfterMs(metadataWith(bad)), bad).toBeUndefined();
    }
  });
});
