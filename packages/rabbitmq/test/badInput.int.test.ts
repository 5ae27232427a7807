import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConsumer, DeadLetterHeaders, ErrorCodes, memoryStore } from '@idemq/core';
import amqplib, { type Options } from 'amqplib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { InternalHeaders, type QueueType, rabbitmq } from '../src/index.js';
import { testOptions, uniqueSource } from './harness.js';

/** Messages a careless or hostile producer could send straight through amqplib. */
const BAD_INPUT: Array<{ name: string; body: Buffer; options: Options.Publish; code: string }> = [
  {
    name: 'body is not JSON',
    body: Buffer.from('{"amount": 1'),
    options: { messageId: 'bad-json', contentType: 'application/json' },
    code: ErrorCodes.PAYLOAD_MALFORMED,
  },
  {
    name: 'body is not UTF-8',
    body: Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
    options: { messageId: 'bad-utf8' },
    code: ErrorCodes.PAYLOAD_MALFORMED,
  },
  {
    name: 'no messageId',
    body: Buffer.from('{"amount": 1}'),
    options: {},
    code: ErrorCodes.REQUEST_ID_MISSING,
  },
  {
    name: 'blank messageId',
    body: Buffer.from('{"amount": 1}'),
    options: { messageId: '   ' },
    code: ErrorCodes.REQUEST_ID_MISSING,
  },
  {
    // messageId holds at most 255 bytes: a longer id can only come in the header fallback.
    name: 'oversized id (600 bytes)',
    body: Buffer.from('{"amount": 1}'),
    options: { headers: { [InternalHeaders.requestId]: 'x'.repeat(600) } },
    code: ErrorCodes.REQUEST_ID_TOO_LONG,
  },
  {
    name: 'id bytes are not UTF-8',
    body: Buffer.from('{"amount": 1}'),
    options: { headers: { [InternalHeaders.requestId]: Buffer.from([0x61, 0xc3, 0x28]) } },
    code: ErrorCodes.REQUEST_ID_INVALID,
  },
];

describe.each<QueueType>(['quorum', 'classic'])('bad input (%s queues)', (queueType) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    cleanup.length = 0;
  });

  it('is dead-lettered with a reason and code, never lost, and the consumer keeps running', async () => {
    const transport = rabbitmq(testOptions(queueType));
    cleanup.push(() => transport.close());
    const source = uniqueSource('bad');
    const handled: unknown[] = [];
    const deadLetterEvents: string[] = [];
    const errors: unknown[] = [];
    const consumer = createConsumer({
      transport,
      store: memoryStore(),
      source,
      scope: 'bad-input',
      handler: (message) => {
        handled.push(message.value);
      },
    });
    consumer.on('dead-letter', (event) => deadLetterEvents.push(event.code));
    consumer.on('error', (event) => errors.push(event.error));
    await consumer.start();
    cleanup.push(() => consumer.stop());

    const raw = await amqplib.connect(inject('amqp').url);
    cleanup.push(() => raw.close());
    const channel = await raw.createConfirmChannel();
    for (const [i, input] of BAD_INPUT.entries()) {
      const headers = { ...input.options.headers, 'x-case': String(i) };
      channel.publish(source, '', input.body, { ...input.options, headers });
    }
    await channel.waitForConfirms();
    // A good message after the bad ones: the consumer is still running.
    await transport.publish(source, { requestId: `good-${randomUUID()}`, body: { amount: 2 } });

    const deadline = performance.now() + 10_000;
    while (
      (handled.length < 1 || deadLetterEvents.length < BAD_INPUT.length) &&
      performance.now() < deadline
    ) {
      await sleep(20);
    }
    expect(handled).toEqual([{ amount: 2 }]);
    expect(deadLetterEvents.sort()).toEqual(BAD_INPUT.map((b) => b.code).sort());
    expect(errors).toEqual([]);

    // Every one of them is in the dead-letter queue, body intact, with reason, code and source.
    const letters = new Map<number, amqplib.GetMessage>();
    const read = await raw.createChannel();
    for (let tries = 0; letters.size < BAD_INPUT.length && tries < 100; tries++) {
      const letter = await read.get(`${source}.dlq`, { noAck: true });
      if (letter === false) await sleep(20);
      else letters.set(Number(letter.properties.headers?.['x-case']), letter);
    }
    expect(letters.size).toBe(BAD_INPUT.length);
    for (const [i, input] of BAD_INPUT.entries()) {
      const letter = letters.get(i);
      const headers = letter?.properties.headers ?? {};
      expect(letter?.content, input.name).toEqual(input.body);
      expect(headers[DeadLetterHeaders.code], input.name).toBe(input.code);
      expect(String(headers[DeadLetterHeaders.reason]).length, input.name).toBeGreaterThan(0);
      expect(headers[DeadLetterHeaders.source], input.name).toBe(source);
    }
    expect(await read.get(source)).toBe(false);
  });
});
