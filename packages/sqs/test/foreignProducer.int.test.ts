import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { runForeignProducerCase } from '@idemq/conformance';
import { afterAll, describe, it } from 'vitest';
import { CloudEventsAttributes, sqs } from '../src/index.js';
import { adminClient, clientConfig, QueueFactory, uniqueQueueName } from './helpers.js';

const admin = adminClient();
const queues = new QueueFactory(admin);
afterAll(async () => {
  await queues.deleteAll();
  admin.destroy();
});

const text = (value: string) => ({ DataType: 'String', StringValue: value });

describe('a producer that is not idemq (@aws-sdk/client-sqs, CloudEvents attributes)', () => {
  it('each event runs once, copies are skipped, bodies decode by content type', async () => {
    const name = uniqueQueueName('foreign');
    const url = await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const transport = sqs({ clientConfig, waitTimeMs: 1_000 });
    try {
      await runForeignProducerCase({
        transport,
        source: name,
        publish: async (events) => {
          const sent = await admin.send(
            new SendMessageBatchCommand({
              QueueUrl: url,
              Entries: events.map((event, i) => ({
                Id: `e${i}`,
                MessageBody: event.body.toString('utf8'),
                MessageAttributes: {
                  [CloudEventsAttributes.id]: text(event.id),
                  [CloudEventsAttributes.source]: text(event.source),
                  ce_specversion: text('1.0'),
                  ce_type: text(event.type),
                  [CloudEventsAttributes.contentType]: text(event.contentType),
                },
              })),
            }),
          );
          if (sent.Failed?.length) throw new Error(`send failed: ${JSON.stringify(sent.Failed)}`);
        },
      });
    } finally {
      await transport.close();
    }
  });
});
