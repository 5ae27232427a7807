import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConsumer, ErrorCodes, memoryStore, PublishFailedError } from '@idemq/core';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { recordBatchBytes } from '../src/errors.js';
import { KafkaHeaders } from '../src/index.js';
import { publishedRecord } from '../src/publisher.js';
import {
  admin,
  brokers,
  closedAfterEach,
  createTopics,
  testTransport,
  topicName,
} from './helpers.js';

const opened = closedAfterEach();

/** The topic's `max.message.bytes`, and the transport's `maxPayloadBytes`. */
const LIMIT = 50_000;

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function foreignProducer() {
  const producer = new Kafka({
    clientId: 'not-idemq',
    brokers,
    logLevel: logLevel.NOTHING,
  }).producer({ createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 0 } });
  await producer.connect();
  opened.push({ close: () => producer.disconnect() });
  return producer;
}

function consume(transport: ReturnType<typeof testTransport>, source: string) {
  const handled: Array<{ requestId: string; bytes: number }> = [];
  const deadLetters: Array<{ requestId: string | undefined; code: string }> = [];
  const errors: unknown[] = [];
  const consumer = createConsumer<number, void>({
    transport,
    store: memoryStore(),
    source,
    scope: 'boundary',
    decode: (body) => body.byteLength,
    handler: (message) => {
      handled.push({ requestId: message.requestId, bytes: message.value });
    },
  });
  consumer.on('dead-letter', ({ requestId, code }) => deadLetters.push({ requestId, code }));
  consumer.on('error', ({ error }) => errors.push(error));
  opened.push({ close: () => consumer.stop() });
  return { consumer, handled, deadLetters, errors };
}

describe('the size boundary', () => {
  it("accepts a record batch of exactly the topic's max.message.bytes, which the broker takes, and refuses one byte more, which the broker refuses too", async () => {
    const topic = topicName('size');
    await (await admin()).createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: 1,
          configEntries: [{ name: 'max.message.bytes', value: String(LIMIT) }],
        },
      ],
    });
    const transport = testTransport({ maxPayloadBytes: LIMIT });
    opened.push(transport);
    const { consumer, handled, errors } = consume(transport, topic);
    await consumer.start();

    const requestId = `fits-${randomUUID()}`;
    const message = (bodyBytes: number) => ({
      requestId,
      key: 'customer-7',
      headers: { 'x-user': 'h'.repeat(500) },
      body: new Uint8Array(bodyBytes),
    });
    const batchOf = (bodyBytes: number) =>
      recordBatchBytes(publishedRecord(message(bodyBytes), KafkaHeaders.requestId).record);
    let bodyBytes = LIMIT - batchOf(0);
    while (batchOf(bodyBytes) > LIMIT) bodyBytes--;
    expect(batchOf(bodyBytes)).toBe(LIMIT);
    expect(batchOf(bodyBytes + 1)).toBe(LIMIT + 1);

    await transport.publish(topic, message(bodyBytes));
    const refused = await transport
      .publish(topic, { ...message(bodyBytes + 1), requestId: `over-${randomUUID()}` })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(PublishFailedError);
    expect(refused).toMatchObject({ failure: 'too-large', retriable: false });

    // The broker's own verdict on that record: refused, so idemq's count is the broker's.
    const producer = await foreignProducer();
    const over = publishedRecord(message(bodyBytes + 1), KafkaHeaders.requestId).record;
    const brokerRefusal = await producer.send({ topic, acks: -1, messages: [over] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(brokerRefusal)).toMatch(/larger than the max message size/);

    await until(() => handled.length >= 1, 'the record of exactly the limit');
    await sleep(500);
    expect(handled).toEqual([{ requestId, bytes: bodyBytes }]);
    expect(errors).toEqual([]);
  });

  it('dead-letters a larger record from another producer with IDEMQ_ERR_PAYLOAD_TOO_LARGE and moves on', async () => {
    const topic = topicName('size-foreign');
    await createTopics([topic, `${topic}.dlq`]);
    const transport = testTransport();
    opened.push(transport);
    const maxBytes = transport.capabilities.maxPayloadBytes ?? 0;
    const producer = await foreignProducer();
    const oversized = `oversized-${randomUUID()}`;
    const after = `after-${randomUUID()}`;
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { value: Buffer.alloc(maxBytes + 1, 7), headers: { [KafkaHeaders.requestId]: oversized } },
        { value: Buffer.from('{}'), headers: { [KafkaHeaders.requestId]: after } },
      ],
    });
    const { consumer, handled, deadLetters, errors } = consume(transport, topic);
    await consumer.start();
    await until(() => handled.length >= 1 && deadLetters.length >= 1, 'the dead letter');
    expect(handled).toEqual([{ requestId: after, bytes: 2 }]);
    // The event fires once the dead-letter topic acknowledged the copy.
    expect(deadLetters).toEqual([{ requestId: oversized, code: ErrorCodes.PAYLOAD_TOO_LARGE }]);
    expect(errors).toEqual([]);
  });
});
