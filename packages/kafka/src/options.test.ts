import { InvalidOptionsError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { kafka } from './kafka.js';

describe('kafka() options', () => {
  it.each([
    ['a URL', 'http://127.0.0.1:9092'],
    ['no port', '127.0.0.1'],
    ['not an address', 'not a url'],
    ['a port out of range', '127.0.0.1:70000'],
  ])('refuses a broker with %s at construction, not after the retries', (_name, broker) => {
    const build = () => kafka({ brokers: ['127.0.0.1:9092', broker] });
    expect(build).toThrow(InvalidOptionsError);
    expect(build).toThrow(
      `brokers must be host:port strings (no scheme), got ${JSON.stringify(broker)}`,
    );
  });

  it('accepts host:port, [ipv6]:port and names', async () => {
    for (const broker of ['127.0.0.1:9092', '[::1]:9092', 'kafka-0.internal:19092']) {
      const transport = kafka({ brokers: [broker] });
      await transport.close();
    }
  });
});
