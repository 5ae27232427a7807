import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { HandlerSpy } from '@idemq/conformance';
import { createConsumer, DeadLetterHeaders, ErrorCodes, memoryStore } from '@idemq/core';
import { afterAll, describe, expect, it } from 'vitest';
import { FormerAttributes } from '../src/attributes.js';
import { MessageAttributeNames, queueDepth, sqs } from '../src/index.js';
import { adminClient, clientConfig, QueueFactory, uniqueQueueName } from './helpers.js';

/*
 * F07 on SQS: messages no idemq publisher would write — no requestId attribute, an oversized
 * one, a body that does not decode — are dead-lettered with their reason, never lost, and the
 * consumer keeps processing what comes after them.
 */

const admin = adminClient();
const queues = new QueueFactory(admin);
afterAll(async () => {
  await queues.deleteAll();
  admin.destroy();
});

const text = (value: string) => ({ DataType: 'String', StringValue: value });

describe('bad input', () => {
  it('dead-letters missing and oversized requestIds and undecodable bodies; good messages flow', async () => {
    const name = uniqueQueueName('bad-input');
    const url = await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const transport = sqs({ clientConfig, waitTimeMs: 1_000 });
    const spy = new HandlerSpy({ timeoutMs: 10_000 });
    const handled: unknown[] = [];
    const consumer = createConsumer({
      transport: spy.wrapTransport(transport),
      store: memoryStore(),
      source: name,
      scope: 'bad-input',
      handler: spy.wrapHandler((message) => {
        handled.push(message.value);
      }),
    });
    spy.watch(consumer);
    await consumer.start();
    try {
      const send = (body: string, attributes: Record<string, ReturnType<typeof text>>) =>
        admin.send(
          new SendMessageCommand({
            QueueUrl: url,
            MessageBody: body,
            MessageAttributes: attributes,
          }),
        );
      await send('{"amount":1}', { origin: text('no-id') });
      await send('{"amount":2}', { [MessageAttributeNames.requestId]: text('x'.repeat(600)) });
      await send('{"amount": 3', { [MessageAttributeNames.requestId]: text('malformed-json') });
      await send('%%% not base64 %%%', {
        [MessageAttributeNames.requestId]: text('bad-base64'),
        [MessageAttributeNames.bodyEncoding]: text('base64'),
      });
      // Valid base64 of bytes that are not UTF-8: the default JSON decoder refuses them.
      await send(Buffer.from([0xff, 0xfe, 0x00]).toString('base64'), {
        [MessageAttributeNames.requestId]: text('not-utf8'),
        [MessageAttributeNames.bodyEncoding]: text('base64'),
      });
      await transport.publish(name, { requestId: 'good', body: { amount: 4 } });

      await spy.waitFor('good', 'processed');
      await spy.waitForCount('dead-letter', 5);
      expect(handled).toEqual([{ amount: 4 }]);
      const codes = spy
        .all('dead-letter')
        .map((r) => r.data.code)
        .sort();
      expect(codes).toEqual(
        [
          ErrorCodes.REQUEST_ID_MISSING,
          ErrorCodes.REQUEST_ID_TOO_LONG,
          ErrorCodes.PAYLOAD_MALFORMED,
          ErrorCodes.PAYLOAD_MALFORMED,
          ErrorCodes.PAYLOAD_MALFORMED,
        ].sort(),
      );

      // Every one of them is on the DLQ with its reason; nothing is left on the source queue.
      const { Messages = [] } = await admin.send(
        new ReceiveMessageCommand({
          QueueUrl: (await queues.urlOf(`${name}-dlq`)) ?? '',
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
        }),
      );
      expect(Messages).toHaveLength(5);
      for (const message of Messages) {
        const headers = JSON.parse(
          message.MessageAttributes?.[MessageAttributeNames.headers]?.StringValue ?? '{}',
        );
        expect(headers[DeadLetterHeaders.reason]).toEqual(expect.any(String));
        expect(headers[DeadLetterHeaders.code]).toMatch(/^IDEMQ_ERR_/);
        expect(headers[DeadLetterHeaders.source]).toBe(name);
      }
      const noId = Messages.find((m) => m.MessageAttributes?.origin?.StringValue === 'no-id');
      expect(noId?.Body).toBe('{"amount":1}');
      expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
    } finally {
      await consumer.stop();
      await transport.close();
    }
  });
  it('reads messages sent before the upgrade, under the former attribute names: one run per id', async () => {
    const name = uniqueQueueName('former-names');
    const url = await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const transport = sqs({ clientConfig, waitTimeMs: 1_000 });
    const spy = new HandlerSpy({ timeoutMs: 10_000 });
    const handled: Array<{ requestId: string; headers: Record<string, string>; value: unknown }> =
      [];
    const consumer = createConsumer({
      transport: spy.wrapTransport(transport),
      store: memoryStore(),
      source: name,
      scope: 'former-names',
      handler: spy.wrapHandler((message) => {
        handled.push({
          requestId: message.requestId,
          headers: { ...message.headers },
          value: message.value,
        });
      }),
    });
    spy.watch(consumer);
    await consumer.start();
    try {
      const former = {
        [FormerAttributes.requestId]: text('before-upgrade'),
        [FormerAttributes.headers]: text('{"tenant":"a"}'),
        [FormerAttributes.contentType]: text('application/json'),
      };
      await admin.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: '{"n":1}',
          MessageAttributes: former,
        }),
      );
      // The same id again, as a publisher retrying: a duplicate, not a message without an id.
      await admin.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: '{"n":1}',
          MessageAttributes: former,
        }),
      );
      await transport.publish(name, { requestId: 'before-upgrade', body: { n: 1 } });

      await spy.waitFor('before-upgrade', 'processed');
      await spy.waitForCount('duplicate', 2);
      expect(spy.all('dead-letter')).toEqual([]);
      expect(handled).toEqual([
        { requestId: 'before-upgrade', headers: { tenant: 'a' }, value: { n: 1 } },
      ]);
    } finally {
      await consumer.stop();
      await transport.close();
    }
  });
});
