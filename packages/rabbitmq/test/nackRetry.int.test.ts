import { setTimeout as sleep } from 'node:timers/promises';
import type { Delivery } from '@idemq/core';
import amqplib from 'amqplib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { NACK_RETRY_PAUSES_MS } from '../src/confirms.js';
import { PublishFailedError, rabbitmq } from '../src/index.js';
import { testOptions, uniqueSource } from './harness.js';

/*
 * A copy the broker nacks (a quorum tier queue still electing its leader, in the field) is
 * published again a few times before the delivery gives up. Here the nack comes from a full
 * queue with `x-overflow: reject-publish`, bound to the dead-letter exchange in place of the
 * dead-letter queue.
 */
describe('a nacked copy is published again', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });

  async function setup() {
    const source = uniqueSource('nack');
    const transport = rabbitmq(testOptions('quorum'));
    cleanup.push(() => transport.close());
    const deliveries: Delivery[] = [];
    const subscription = await transport.subscribe({
      source,
      maxInFlight: 1,
      onDelivery: (delivery) => deliveries.push(delivery),
    });
    cleanup.push(() => subscription.close());

    const raw = await amqplib.connect(inject('amqp').url);
    cleanup.push(() => raw.close());
    const channel = await raw.createConfirmChannel();
    // A full queue that refuses more takes the place of `<source>.dlq` on the exchange.
    const blocker = `${source}.blocker`;
    await channel.assertQueue(blocker, {
      durable: false,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    cleanup.push(() => channel.deleteQueue(blocker));
    await channel.bindQueue(blocker, `${source}.dlq`, '');
    await channel.unbindQueue(`${source}.dlq`, `${source}.dlq`, '');
    channel.sendToQueue(blocker, Buffer.from('filler'));
    await channel.waitForConfirms();

    await transport.publish(source, { requestId: 'to-dead-letter', body: { n: 1 } });
    const first = await next(deliveries, 0);
    return { channel, blocker, deliveries, first };
  }

  it('goes through when a later try finds room, and the original is settled', async () => {
    const { channel, blocker, deliveries, first } = await setup();
    const startedAt = performance.now();
    const rejecting = first.reject({ reason: 'bad', code: 'X' });
    // Room after the first try was nacked and before the second.
    await sleep((NACK_RETRY_PAUSES_MS[0] ?? 0) / 2);
    expect(await channel.get(blocker, { noAck: true })).not.toBe(false);
    await expect(rejecting).resolves.toBe(true);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(NACK_RETRY_PAUSES_MS[0] ?? 0);

    const letter = await channel.get(blocker, { noAck: true });
    expect(letter === false ? undefined : letter.properties.messageId).toBe('to-dead-letter');
    await sleep(300);
    expect(deliveries).toHaveLength(1); // settled: never handed back
  });

  it('rejects as nacked once every try was nacked, and hands the original back', async () => {
    const { channel, blocker, deliveries, first } = await setup();
    const startedAt = performance.now();
    const error = await first.reject({ reason: 'bad', code: 'X' }).catch((e: unknown) => e);
    const pausesMs = NACK_RETRY_PAUSES_MS.reduce((sum, ms) => sum + ms, 0);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(pausesMs);
    expect(error).toBeInstanceOf(PublishFailedError);
    expect(error).toMatchObject({ failure: 'nacked', retriable: true });

    // Not lost: RabbitMQ delivers the original again, and no copy reached the dead letters.
    const again = await next(deliveries, 1);
    expect(again.message.requestId).toBe('to-dead-letter');
    expect(again.message.redelivered).toBe(true);
    expect((await channel.checkQueue(blocker)).messageCount).toBe(1); // the filler alone
    await again.ack();
  });
});

async function next(deliveries: Delivery[], index: number): Promise<Delivery> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const delivery = deliveries[index];
    if (delivery) return delivery;
    if (performance.now() > deadline) throw new Error(`no delivery #${index + 1}`);
    await sleep(10);
  }
}
