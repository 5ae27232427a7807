import { describe, expect, it } from 'vitest';
import { fakeClient } from '../test/fakeClient.js';
import { deadLetterNameOf, parseQueueArn, QueueDirectory, queueNameOf } from './queues.js';

describe('queue names', () => {
  it('reads the name from a queue URL, and passes names through', () => {
    expect(queueNameOf('https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo')).toBe(
      'orders.fifo',
    );
    expect(queueNameOf('http://127.0.0.1:9324/000000000000/orders/')).toBe('orders');
    expect(queueNameOf('orders')).toBe('orders');
  });

  it('names dead-letter queues <name>-dlq, keeping the .fifo suffix last', () => {
    expect(deadLetterNameOf('orders')).toBe('orders-dlq');
    expect(deadLetterNameOf('orders.fifo')).toBe('orders-dlq.fifo');
  });

  it('parses queue ARNs', () => {
    expect(parseQueueArn('arn:aws:sqs:us-east-1:000000000000:orders-dlq')).toEqual({
      account: '000000000000',
      name: 'orders-dlq',
    });
    expect(parseQueueArn('orders-dlq')).toEqual({ account: undefined, name: 'orders-dlq' });
  });
});

describe('QueueDirectory', () => {
  it('resolves a name once, uses URLs as they are, and maps sources through queueOf', async () => {
    const { client, calls } = fakeClient({
      GetQueueUrlCommand: (input) => ({ QueueUrl: `http://sqs/000/${String(input.QueueName)}` }),
    });
    const directory = new QueueDirectory(client, (source) =>
      source === 'payments.dlq' ? 'payments-dlq' : source,
    );
    const [a, b] = await Promise.all([directory.ref('orders.fifo'), directory.ref('orders.fifo')]);
    expect(a).toEqual({ url: 'http://sqs/000/orders.fifo', name: 'orders.fifo', fifo: true });
    expect(b).toBe(a);
    expect((await directory.ref('payments.dlq')).name).toBe('payments-dlq');
    expect(await directory.ref('https://sqs.x/1/direct')).toEqual({
      url: 'https://sqs.x/1/direct',
      name: 'direct',
      fifo: false,
    });
    expect(calls.map((c) => c.input.QueueName)).toEqual(['orders.fifo', 'payments-dlq']);
  });

  it('does not cache a failed lookup', async () => {
    let fail = true;
    const { client } = fakeClient({
      GetQueueUrlCommand: () => {
        if (fail) throw new Error('QueueDoesNotExist');
        return { QueueUrl: 'http://sqs/000/late' };
      },
    });
    const directory = new QueueDirectory(client, (s) => s);
    await expect(directory.ref('late')).rejects.toThrow();
    fail = false;
    await expect(directory.ref('late')).resolves.toMatchObject({ name: 'late' });
  });

  it('reads visibility, redrive target and size limit from the queue attributes', async () => {
    const { client } = fakeClient({
      GetQueueAttributesCommand: () => ({
        Attributes: {
          VisibilityTimeout: '45',
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:q-dlq',
            maxReceiveCount: 5,
          }),
        },
      }),
    });
    const directory = new QueueDirectory(client, (s) => s);
    expect(await directory.settings({ url: 'u', name: 'q', fifo: false })).toEqual({
      visibilityMs: 45_000,
      redriveTargetArn: 'arn:aws:sqs:us-east-1:000000000000:q-dlq',
      maxMessageBytes: undefined,
    });
  });
});
