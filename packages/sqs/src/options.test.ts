import { InvalidOptionsError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { fakeClient } from '../test/fakeClient.js';
import { SQS_DEFAULTS, validateOptions } from './options.js';
import { sqs, sqsCapabilities } from './sqs.js';

describe('options', () => {
  it('reports every bad field in one error', () => {
    const { client } = fakeClient();
    const error = (() => {
      try {
        validateOptions({
          client,
          clientConfig: {},
          waitTimeMs: 1_500,
          visibilityTimeoutMs: 13 * 60 * 60 * 1000,
          maxPayloadBytes: 2 * 1024 * 1024,
          fifo: 'yes' as unknown as boolean,
          deadLetterQueue: '',
        });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).problems).toHaveLength(6);
  });

  it.each(['not a url', '127.0.0.1:9324', 'ftp://127.0.0.1:9324'])(
    'refuses the endpoint %j at construction, not at the first request',
    (endpoint) => {
      const build = () => sqs({ clientConfig: { endpoint, region: 'us-east-1' } });
      expect(build).toThrow(InvalidOptionsError);
      expect(build).toThrow(/clientConfig.endpoint must be an http:\/\/ or https:\/\/ URL/);
    },
  );

  it('accepts the defaults and whole seconds', () => {
    expect(() => validateOptions({})).not.toThrow();
    expect(() => validateOptions({ waitTimeMs: 0, visibilityTimeoutMs: 30_000 })).not.toThrow();
    expect(SQS_DEFAULTS).toMatchObject({ waitTimeMs: 20_000, maxPayloadBytes: 262_144 });
    expect(Object.isFrozen(SQS_DEFAULTS)).toBe(true);
  });
});

describe('capabilities', () => {
  it('standard queues: no order, approximate attempts, 12 h delays and leases', () => {
    expect(sqsCapabilities()).toMatchObject({
      redeliveryCounter: 'approximate',
      nativeDelay: { maxMs: 43_200_000 },
      deadLetter: 'emulated',
      orderingScope: 'none',
      nackBlocksKey: false,
      leaseExtension: { maxTotalMs: 43_200_000 },
      batchAck: 'individual',
      maxHeaders: null,
      maxPayloadBytes: 262_144,
      releaseCountsAttempt: true,
      replayForNewGroup: false,
    });
  });

  it('FIFO queues: order per group, a retry blocks its group; redrive makes dead letters native', () => {
    expect(
      sqsCapabilities({ fifo: true, redrive: true, maxPayloadBytes: 1_048_576 }),
    ).toMatchObject({
      orderingScope: 'group',
      nackBlocksKey: true,
      deadLetter: 'native',
      maxPayloadBytes: 1_048_576,
    });
  });

  it('a transport declares what sqsCapabilities() says for its options', () => {
    const { client } = fakeClient();
    expect(sqs({ client, fifo: true }).capabilities).toEqual(sqsCapabilities({ fifo: true }));
  });
});
