import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { encodeRetryStatus, RETRY_INFO_TYPE_URL, retryDelayFromStatus } from './statusDetails.js';

// Google's own definitions, read by protobufjs: what other-language clients decode with.
const protos = join(
  dirname(createRequire(import.meta.url).resolve('google-proto-files/package.json')),
  'google',
);
const root = new protobuf.Root().loadSync(
  [join(protos, 'rpc/status.proto'), join(protos, 'rpc/error_details.proto')],
  { keepCase: true },
);
const Status = root.lookupType('google.rpc.Status');
const RetryInfo = root.lookupType('google.rpc.RetryInfo');

describe('grpc-status-details-bin with RetryInfo', () => {
  it.each([0, 1, 999, 1_000, 1_500, 40_000, 86_400_123])(
    'encodes a Status that Google’s protos decode, with a %d ms retry delay',
    (delayMs) => {
      const bytes = encodeRetryStatus(10, 'still running', delayMs);
      const status = Status.toObject(Status.decode(bytes), { longs: Number }) as {
        code: number;
        message: string;
        details: { type_url: string; value: Uint8Array }[];
      };
      expect(status.code).toBe(10);
      expect(status.message).toBe('still running');
      expect(status.details).toHaveLength(1);
      expect(status.details[0]?.type_url).toBe(RETRY_INFO_TYPE_URL);
      const info = RetryInfo.toObject(
        RetryInfo.decode(status.details[0]?.value ?? new Uint8Array()),
        {
          longs: Number,
          defaults: true,
        },
      ) as { retry_delay: { seconds: number; nanos: number } };
      expect(info.retry_delay.seconds * 1000 + info.retry_delay.nanos / 1e6).toBe(delayMs);
      expect(retryDelayFromStatus(bytes)).toBe(delayMs);
    },
  );

  it('reads the delay from a Status Google’s protos wrote, beside other details', () => {
    const retry = RetryInfo.encode(
      RetryInfo.create({ retry_delay: { seconds: 3, nanos: 250_000_000 } }),
    ).finish();
    const bytes = Status.encode(
      Status.fromObject({
        code: 14,
        message: 'down',
        details: [
          {
            type_url: 'type.googleapis.com/google.rpc.DebugInfo',
            value: Uint8Array.of(10, 1, 120),
          },
          { type_url: RETRY_INFO_TYPE_URL, value: retry },
        ],
      }),
    ).finish();
    expect(retryDelayFromStatus(bytes)).toBe(3_250);
  });

  it.each([
    ['no details', Status.encode(Status.fromObject({ code: 10, message: 'x' })).finish()],
    ['garbage', Uint8Array.of(0xff, 0xff, 0xff)],
    ['a truncated field', Uint8Array.of(0x1a, 0x20, 1, 2)],
    ['empty bytes', new Uint8Array()],
  ])('advises nothing for %s', (_name, bytes) => {
    expect(retryDelayFromStatus(bytes)).toBeUndefined();
  });
});
