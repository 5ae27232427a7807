import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { SQS_QUEUES, serviceUrls } from '@idemq/services';
import { afterAll, describe, expect, it } from 'vitest';

// Belt and braces next to vitest.config.ts: no lookup of the EC2 metadata endpoint, ever.
process.env.AWS_EC2_METADATA_DISABLED = 'true';

describe('SQS (ElasticMQ)', () => {
  const { sqsEndpoint, sqsRegion } = serviceUrls();
  // Explicit endpoint, region and dummy credentials: the SDK's default chains are never consulted.
  const sqs = new SQSClient({
    endpoint: sqsEndpoint,
    region: sqsRegion,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 2,
  });
  const created: string[] = [];

  afterAll(async () => {
    for (const QueueUrl of created) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    sqs.destroy();
  });

  async function createQueue(name: string, attributes: Record<string, string> = {}) {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    if (!QueueUrl) throw new Error(`no QueueUrl for ${name}`);
    created.push(QueueUrl);
    return QueueUrl;
  }

  /** Receives (and deletes) until `count` messages came, then polls once more for extras. */
  async function receiveAll(queueUrl: string, count: number): Promise<Message[]> {
    const messages: Message[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      const done = messages.length >= count;
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: done ? 0 : 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      for (const message of Messages) {
        messages.push(message);
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
      }
      if (done) break;
    }
    return messages;
  }

  it('has the project queues pre-created, with their dead-letter queues', async () => {
    for (const QueueName of SQS_QUEUES) {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName }));
      expect(QueueUrl).toMatch(new RegExp(`/${QueueName.replace('.', '\\.')}$`));
    }
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'idemq-demo.fifo' }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
    );
    expect(Attributes?.FifoQueue).toBe('true');
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toMatchObject({
      deadLetterTargetArn: expect.stringMatching(/:idemq-demo-dlq\.fifo$/),
      maxReceiveCount: 3,
    });
  });

  it('sends, receives and deletes on a fresh standard queue', async () => {
    const queueUrl = await createQueue(`idemq-smoke-${randomUUID()}`);
    const { MessageId } = await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"n":1}' }),
    );

    const [message, ...rest] = await receiveAll(queueUrl, 1);
    expect(rest).toEqual([]);
    expect(message?.MessageId).toBe(MessageId);
    expect(message?.Body).toBe('{"n":1}');
    expect(message?.Attributes?.ApproximateReceiveCount).toBe('1');

    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it('keeps order and drops duplicates on a fresh FIFO queue', async () => {
    const queueUrl = await createQueue(`idemq-smoke-${randomUUID()}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'false',
    });
    const send = (body: string, dedupId: string) =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageGroupId: 'group-1',
          MessageDeduplicationId: dedupId,
        }),
      );
    await send('first', 'd1');
    await send('second', 'd2');
    await send('first again', 'd1'); // same deduplication id within 5 minutes: dropped

    const messages = await receiveAll(queueUrl, 2);
    expect(messages.map((message) => message.Body)).toEqual(['first', 'second']);
  });
});
