import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createConsumer,
  DeadLetterHeaders,
  ErrorCodes,
  memoryStore,
  PublishFailedError,
} from '@idemq/core';
import amqplib from 'amqplib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { rabbitmq } from '../src/index.js';
import { testOptions, uniqueSource } from './harness.js';

// RabbitMQ's max_message_size counts the body only: headers and properties are not in it.
const MAX_BODY_BYTES = 16 * 1024 * 1024;

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('the size boundary (quorum queues)', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    cleanup.length = 0;
  });

  async function consume(source: string) {
    const transport = rabbitmq(testOptions('quorum'));
    cleanup.push(() => transport.close());
    const handled: Array<{ requestId: string; bytes: number; header: string | undefined }> = [];
    const deadLetters: Array<{ requestId: string | undefined; code: string }> = [];
    const errors: unknown[] = [];
    const consumer = createConsumer<number, void>({
      transport,
      store: memoryStore(),
      source,
      scope: 'boundary',
      decode: (body) => body.byteLength,
      handler: (message) => {
        const header = message.headers['x-user'];
        handled.push({ requestId: message.requestId, bytes: message.value, header });
      },
    });
    consumer.on('dead-letter', ({ requestId, code }) => deadLetters.push({ requestId, code }));
    consumer.on('error', ({ error }) => errors.push(error));
    await consumer.start();
    cleanup.push(() => consumer.stop());
    return { transport, handled, deadLetters, errors };
  }

  it('delivers a body of exactly the maximum with headers and a key, and refuses one byte more before sending', async () => {
    const source = uniqueSource('size');
    const { transport, handled, errors } = await consume(source);
    expect(transport.capabilities.maxPayloadBytes).toBe(MAX_BODY_BYTES);

    const fits = `fits-${randomUUID()}`;
    await transport.publish(source, {
      requestId: fits,
      key: 'k-1',
      headers: { 'x-user': 'h'.repeat(1_000) },
      body: new Uint8Array(MAX_BODY_BYTES),
    });
    const tooLarge = `too-large-${randomUUID()}`;
    const refused = await transport
      .publish(source, { requestId: tooLarge, body: new Uint8Array(MAX_BODY_BYTES + 1) })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(PublishFailedError);
    expect(refused).toMatchObject({
      code: ErrorCodes.PUBLISH_FAILED,
      failure: 'too-large',
      retriable: false,
      requestId: tooLarge,
    });
    // The publisher still works, and the refused message never reached the broker.
    const after = `after-${randomUUID()}`;
    await transport.publish(source, { requestId: after, body: new Uint8Array(1) });
    await until(() => handled.length >= 2, 'both deliveries');
    await sleep(300);
    expect(handled).toEqual([
      { requestId: fits, bytes: MAX_BODY_BYTES, header: 'h'.repeat(1_000) },
      { requestId: after, bytes: 1, header: undefined },
    ]);
    expect(errors).toEqual([]);
  });

  it('dead-letters a larger body from another producer with IDEMQ_ERR_PAYLOAD_TOO_LARGE and keeps consuming', async () => {
    const source = uniqueSource('size-foreign');
    const { transport, handled, deadLetters, errors } = await consume(source);
    const raw = await amqplib.connect(inject('amqp').url);
    cleanup.push(() => raw.close());
    const channel = await raw.createConfirmChannel();
    const oversized = `oversized-${randomUUID()}`;
    channel.publish(source, '', Buffer.alloc(MAX_BODY_BYTES + 1, 7), { messageId: oversized });
    await channel.waitForConfirms();
    const after = `after-${randomUUID()}`;
    await transport.publish(source, { requestId: after, body: new Uint8Array(2) });

    await until(() => handled.length >= 1 && deadLetters.length >= 1, 'the dead letter');
    expect(handled.map((h) => h.requestId)).toEqual([after]);
    expect(deadLetters).toEqual([{ requestId: oversized, code: ErrorCodes.PAYLOAD_TOO_LARGE }]);
    expect(errors).toEqual([]);

    const read = await raw.createChannel();
    let letter: amqplib.GetMessage | false = false;
    for (let tries = 0; letter === false && tries < 100; tries++) {
      letter = await read.get(`${source}.dlq`, { noAck: true });
      if (letter === false) await sleep(50);
    }
    if (letter === false) throw new Error('no dead letter in the dead-letter queue');
    expect(letter.content.byteLength).toBe(MAX_BODY_BYTES + 1);
    expect(letter.properties.messageId).toBe(oversized);
    expect(letter.properties.headers?.[DeadLetterHeaders.code]).toBe(ErrorCodes.PAYLOAD_TOO_LARGE);
    expect(await read.get(source)).toBe(false);
  });
});
