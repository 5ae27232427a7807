import { serviceUrls } from '@idemq/services';
import amqplib from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import { type BrokerKit, prepareKit } from '../src/transports/kits.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

describe('where a RabbitMQ run left its messages (the report of a run that did not settle)', () => {
  it('counts ready, unacked, and dead letters a quorum queue has not forwarded yet', async () => {
    const kit: BrokerKit = await prepareKit('rabbitmq', serviceUrls());
    cleanup.push(() => kit.close());
    if (kit.spec.kind !== 'rabbitmq') throw new Error('expected a RabbitMQ kit');
    const connection = await amqplib.connect(kit.spec.url);
    cleanup.push(() => connection.close());
    const channel = await connection.createConfirmChannel();
    // A tier queue as the transport declares one, but dead-lettering to a queue that does not
    // exist: its expired copies stay in the queue, neither ready nor unacked.
    await channel.assertQueue('stuck.retry.100', {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': 100,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': 'no-such-queue',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    await channel.assertQueue('waiting', { durable: true });
    for (const queue of ['stuck.retry.100', 'stuck.retry.100', 'waiting']) {
      channel.sendToQueue(queue, Buffer.from('{}'), { persistent: true });
    }
    await channel.waitForConfirms();

    // rabbitmqctl's figures for a quorum queue are refreshed every few seconds.
    const deadline = Date.now() + 20_000;
    let depths = await kit.queueDepths?.();
    while (!depths?.includes('dead-lettered') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      depths = await kit.queueDepths?.();
    }
    expect(depths).toContain(
      'stuck.retry.100: 0 ready, 0 unacked, 2 dead-lettered not yet forwarded',
    );
    expect(depths).toContain('waiting: 1 ready, 0 unacked');
    expect(depths).not.toContain('waiting: 1 ready, 0 unacked, ');
  });
});
