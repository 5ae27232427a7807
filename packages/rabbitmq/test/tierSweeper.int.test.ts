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
});
