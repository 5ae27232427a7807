import type { Delivery } from '@idemq/core';
import amqplib from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { rabbitmq } from '../src/index.js';
import { overdueAfterMs } from '../src/tierSweeper.js';
import { testOptions, uniqueSource } from './harness.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a retry tier that keeps its copies past their time', () => {
  it.each(['quorum', 'classic'] as const)(
    'has them moved back to their %s queue by the consumers, once each',
    async (queueType) => {
      const tierMs = 500;
      const source = uniqueSource('kept');
      const declaring = rabbitmq(testOptions(queueType, { retryTiersMs: [tierMs] }));
      cleanup.push(() => declaring.close());
      const { queue } = await declaring.declare(source, 'default');
      // The tier exists already, without its TTL: like the quorum tier RabbitMQ 3.10 was seen
      // to keep every copy in, it never gives anything back by itself.
      const tier = `${queue}.retry.${tierMs}`;
      const raw = await amqplib.connect(testOptions(queueType).url);
      cleanup.push(() => raw.close());
      const admin = await raw.createChannel();
      await admin.assertQueue(tier, { durable: true, arguments: { 'x-queue-type': queueType } });
      cleanup.push(() => admin.deleteQueue(tier));

      const transport = rabbitmq(
        testOptions(queueType, { retryTiersMs: [tierMs], declare: false }),
      );
      cleanup.push(() => transport.close());
      const seen: Array<{ attempt: number; at: number }> = [];
      const retried: Array<Promise<boolean>> = [];
      const subscription = await transport.subscribe({
        source,
        maxInFlight: 4,
        onDelivery: (delivery: Delivery) => {
          seen.push({ attempt: delivery.message.attempt, at: Date.now() });
          if (seen.length === 1) retried.push(delivery.retry({ delayMs: tierMs }));
          else void delivery.ack();
        },
      });
      cleanup.push(() => subscription.close());
      await transport.publish(source, { requestId: 'kept-by-its-tier', body: { n: 1 } });

      await until('the copy to come back', () => seen.length >= 2);
      expect(await Promise.all(retried)).toEqual([true]);
      const [first, second] = seen as [(typeof seen)[0], (typeof seen)[0]];
      expect(second.attempt).toBe(first.attempt + 1);
      // Moved by the sweeper (the tier has no TTL), once the copy was overdue, not before.
      const waited = second.at - first.at;
      expect(waited).toBeGreaterThanOrEqual(tierMs + overdueAfterMs(tierMs) - 100);
      expect(waited).toBeLessThan(tierMs + overdueAfterMs(tierMs) + 5_000);
      await until('the tier to be empty', async () => {
        return (await admin.checkQueue(tier)).messageCount === 0;
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(seen).toHaveLength(2);
    },
  );

  it('has a copy parked by a consumer that stopped moved back by the next one to subscribe', async () => {
    const tierMs = 500;
    const source = uniqueSource('orphan');
    const options = testOptions('quorum', { retryTiersMs: [tierMs] });
    const first = rabbitmq(options);
    cleanup.push(() => first.close());
    const { queue } = await first.declare(source, 'default');
    const tier = `${queue}.retry.${tierMs}`;
    const raw = await amqplib.connect(options.url);
    cleanup.push(() => raw.close());
    const admin = await raw.createChannel();
    await admin.assertQueue(tier, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    cleanup.push(() => admin.deleteQueue(tier));

    // The first consumer parks a copy in the tier, then goes away before it is due.
    const parked: Array<Promise<boolean>> = [];
    const gone = rabbitmq({ ...options, declare: false });
    cleanup.push(() => gone.close());
    await gone.subscribe({
      source,
      maxInFlight: 1,
      onDelivery: (delivery: Delivery) => parked.push(delivery.retry({ delayMs: tierMs })),
    });
    await first.publish(source, { requestId: 'orphaned-copy', body: { n: 1 } });
    await until('the copy to be parked', () => parked.length === 1);
    expect(await Promise.all(parked)).toEqual([true]);
    // Closing the transport stops its watch on the tier: only the next consumer can help.
    await gone.close();
    expect((await admin.checkQueue(tier)).messageCount).toBe(1);

    const next = rabbitmq({ ...options, declare: false });
    cleanup.push(() => next.close());
    const attempts: number[] = [];
    const subscription = await next.subscribe({
      source,
      maxInFlight: 1,
      onDelivery: (delivery: Delivery) => {
        attempts.push(delivery.message.attempt);
        void delivery.ack();
      },
    });
    cleanup.push(() => subscription.close());
    await until(
      'the copy to come back',
      () => attempts.length === 1,
      tierMs + overdueAfterMs(tierMs) + 10_000,
    );
    expect(attempts).toEqual([2]);
    expect((await admin.checkQueue(tier)).messageCount).toBe(0);
  });
});
