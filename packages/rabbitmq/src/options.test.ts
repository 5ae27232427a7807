import { InvalidOptionsError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { defaultQueueName, RABBITMQ_DEFAULTS, resolveOptions } from './options.js';
import { publishOptions } from './publisher.js';
import { rabbitmq, rabbitmqCapabilities } from './rabbitmq.js';

const connect = async () => {
  throw new Error('not in unit tests');
};

describe('resolveOptions', () => {
  it('fills in the defaults', () => {
    const resolved = resolveOptions({ url: 'amqp://127.0.0.1' }, connect);
    expect(resolved).toMatchObject({
      owned: true,
      queueType: 'quorum',
      declare: true,
      deadLetterSuffix: '.dlq',
      retryTiersMs: RABBITMQ_DEFAULTS.retryTiersMs,
      connectTimeoutMs: 10_000,
      confirmTimeoutMs: 30_000,
      rpcTimeoutMs: 30_000,
      reconnectInitialDelayMs: 100,
      reconnectMaxDelayMs: 5_000,
    });
    expect(resolved.queueName('payments', 'default')).toBe('payments');
    expect(resolved.queueName('payments', 'audit')).toBe('payments.audit');
  });

  it('reports every bad field at once', () => {
    let error: unknown;
    try {
      resolveOptions(
        {
          queueType: 'stream' as 'classic',
          retryTiersMs: [500, 100],
          connectTimeoutMs: 0,
          confirmTimeoutMs: 1.5,
          rpcTimeoutMs: -1,
          reconnect: { initialDelayMs: 10_000, maxDelayMs: 100 },
          deadLetterSuffix: '',
        },
        connect,
      );
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    const { problems } = error as InvalidOptionsError;
    expect(problems).toHaveLength(8);
    expect(problems.join('\n')).toMatch(/confirmTimeoutMs/);
    expect(problems.join('\n')).toMatch(/rpcTimeoutMs/);
    expect(problems.join('\n')).toMatch(/exactly one of url or connection/);
    expect(problems.join('\n')).toMatch(/retryTiersMs must be ascending/);
  });

  it.each([
    ['an http:// URL', 'http://127.0.0.1:5672', /amqp:\/\/ or amqps:\/\/, got http:/],
    ['a malformed URL', 'not a url', /url is not a URL/],
    ['a URL without a host', 'amqp://', /no host/],
    [
      'an options object with another protocol',
      { protocol: 'http', hostname: 'h' },
      /'amqp' or 'amqps'/,
    ],
  ])('refuses %s at construction, not after the connect timeout', (_name, url, problem) => {
    expect(() => rabbitmq({ url })).toThrow(InvalidOptionsError);
    expect(() => rabbitmq({ url })).toThrow(problem);
  });

  it('names the broker by host:port, without credentials', () => {
    expect(resolveOptions({ url: 'amqp://u:secret@broker.example:5673/v' }, connect).endpoint).toBe(
      'broker.example:5673',
    );
    expect(resolveOptions({ url: 'amqps://u:secret@broker.example' }, connect).endpoint).toBe(
      'broker.example:5671',
    );
    expect(resolveOptions({ url: { hostname: 'h' } }, connect).endpoint).toBe('h:5672');
  });

  it('a connection the user owns is never reopened nor closed by the transport', async () => {
    const given = { createConfirmChannel: () => undefined } as never;
    const resolved = resolveOptions({ connection: given }, connect);
    expect(resolved.owned).toBe(false);
    expect(await resolved.open()).toBe(given);
  });
});

describe('capabilities', () => {
  it('are declared per queue type, and equal what a transport reports without connecting', async () => {
    expect(rabbitmqCapabilities('quorum')).toMatchObject({
      redeliveryCounter: 'exact',
      nativeDelay: 'emulated',
      deadLetter: 'emulated',
      leaseExtension: false,
      releaseCountsAttempt: false,
      nackBlocksKey: false,
      orderingScope: 'queue',
    });
    expect(rabbitmqCapabilities('classic').redeliveryCounter).toBe('none');
    const transport = rabbitmq({ url: 'amqp://127.0.0.1:1', queueType: 'classic' });
    expect(transport.capabilities).toEqual(rabbitmqCapabilities('classic'));
    await transport.close();
  });
});

describe('publishOptions', () => {
  it('puts the requestId in messageId, or in a header when over 255 bytes', () => {
    const short = publishOptions(
      'r-1',
      { body: 'x', key: 'k', headers: { a: 'b' } },
      'text/plain',
      1_700_000_000_123,
    );
    expect(short).toEqual({
      persistent: true,
      mandatory: true,
      messageId: 'r-1',
      contentType: 'text/plain',
      timestamp: 1_700_000_000,
      headers: { a: 'b', 'x-idemq-key': 'k' },
    });
    const longId = 'é'.repeat(128); // 256 bytes
    const long = publishOptions(longId, { body: 'x' }, undefined, 0);
    expect(long.messageId).toBeUndefined();
    expect(long.headers).toEqual({ 'x-idemq-request-id': longId });
  });

  it('defaultQueueName: the source for the default group', () => {
    expect(defaultQueueName('q', 'default')).toBe('q');
    expect(defaultQueueName('q', 'g')).toBe('q.g');
  });
});

describe('subscribe', () => {
  it('refuses a group whose queue would be the dead-letter queue', async () => {
    const transport = rabbitmq({ url: 'amqp://127.0.0.1:1' });
    await expect(
      transport.subscribe({
        source: 'payments',
        group: 'dlq',
        maxInFlight: 1,
        onDelivery: () => {},
      }),
    ).rejects.toThrow(/dead-letter queue "payments.dlq"/);
    await transport.close();
  });
});
