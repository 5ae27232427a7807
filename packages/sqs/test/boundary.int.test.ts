import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createConsumer, DeadLetterHeaders, ErrorCodes, memoryStore } from '@idemq/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MessageAttributeNames, PayloadTooLargeError, queueDepth, sqs } from '../src/index.js';
import { adminClient, clientConfig, QueueFactory, uniqueQueueName } from './helpers.js';

const admin = adminClient();
const queues = new QueueFactory(admin);
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});
afterAll(async () => {
  await queues.deleteAll();
  admin.destroy();
});

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function consume(name: string) {
  const transport = sqs({ clientConfig, waitTimeMs: 1_000 });
  cleanup.push(() => transport.close());
  const handled: Array<{ requestId: string; bytes: number; tenant: string | undefined }> = [];
  const deadLetters: Array<{ requestId: string | undefined; code: string }> = [];
  const errors: unknown[] = [];
  const consumer = createConsumer<number, void>({
    transport,
    store: memoryStore(),
    source: name,
    scope: 'boundary',
    decode: (body) => body.byteLength,
    handler: (message) => {
      handled.push({
        requestId: message.requestId,
        bytes: message.value,
        tenant: message.headers.tenant,
      });
    },
  });
  consumer.on('dead-letter', ({ requestId, code }) => deadLetters.push({ requestId, code }));
  consumer.on('error', ({ error }) => errors.push(error));
  await consumer.start();
  cleanup.push(() => consumer.stop());
  return { transport, handled, deadLetters, errors };
}

describe('the size boundary (SQS counts the body and every attribute)', () => {
  it('delivers a message of exactly maxPayloadBytes, attributes included, and refuses one byte more before sending', async () => {
    const name = uniqueQueueName('size');
    const url = await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const { transport, handled, errors } = await consume(name);
    const maxBytes = transport.capabilities.maxPayloadBytes ?? 0;
    expect(maxBytes).toBe(262_144);
    const requestId = `fits-${randomUUID()}`;
    const message = (bodyBytes: number) => ({
      requestId,
      key: 'customer-7',
      headers: { tenant: 't'.repeat(300) },
      body: 'x'.repeat(bodyBytes),
    });

    // What the attributes the adapter adds (requestId, packed headers, key) weigh: the size it
    // reports for a body of the maximum alone, minus that body.
    const probe = await transport.publish(name, message(maxBytes)).catch((error: unknown) => error);
    expect(probe).toBeInstanceOf(PayloadTooLargeError);
    const attributeBytes = (probe as PayloadTooLargeError).bytes - maxBytes;
    expect(attributeBytes).toBeGreaterThan(300 + requestId.length);
    const bodyBytes = maxBytes - attributeBytes;

    await transport.publish(name, message(bodyBytes));
    const refused = await transport
      .publish(name, { ...message(bodyBytes + 1), requestId })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PayloadTooLargeError);
    expect(refused).toMatchObject({
      code: ErrorCodes.PUBLISH_FAILED,
      failure: 'too-large',
      retriable: false,
      bytes: maxBytes + 1,
      maxBytes,
    });

    await until(() => handled.length >= 1, 'the message of exactly the maximum');
    await sleep(1_500);
    expect(handled).toEqual([{ requestId, bytes: bodyBytes, tenant: 't'.repeat(300) }]);
    expect(errors).toEqual([]);
    // Neither refused message reached the queue.
    expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('dead-letters a larger message from another producer with IDEMQ_ERR_PAYLOAD_TOO_LARGE and keeps consuming', async () => {
    const name = uniqueQueueName('size-foreign');
    const url = await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const { transport, handled, deadLetters, errors } = await consume(name);
    const maxBytes = transport.capabilities.maxPayloadBytes ?? 0;
    const oversized = `oversized-${randomUUID()}`;
    // The queue takes it (SQS allows up to 1 MiB); idemq's publish would not have.
    await admin.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'x'.repeat(maxBytes + 1),
        MessageAttributes: {
          [MessageAttributeNames.requestId]: { DataType: 'String', StringValue: oversized },
        },
      }),
    );
    const after = `after-${randomUUID()}`;
    await transport.publish(name, { requestId: after, body: '{}' });

    await until(() => handled.length >= 1 && deadLetters.length >= 1, 'the dead letter');
    expect(handled.map((h) => h.requestId)).toEqual([after]);
    expect(deadLetters).toEqual([{ requestId: oversized, code: ErrorCodes.PAYLOAD_TOO_LARGE }]);
    expect(errors).toEqual([]);

    const { Messages = [] } = await admin.send(
      new ReceiveMessageCommand({
        QueueUrl: (await queues.urlOf(`${name}-dlq`)) ?? '',
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(Messages).toHaveLength(1);
    const headers = JSON.parse(
      Messages[0]?.MessageAttributes?.[MessageAttributeNames.headers]?.StringValue ?? '{}',
    );
    expect(headers[DeadLetterHeaders.code]).toBe(ErrorCodes.PAYLOAD_TOO_LARGE);
    expect(Messages[0]?.Body?.length).toBe(maxBytes + 1);
    expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });
});
