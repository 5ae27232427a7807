import type { Delivery } from '@idemq/core';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PublishFailedError, rabbitmq } from '../src/index.js';
import { BrokerAdmin } from './broker.js';
import { testOptions, uniqueSource } from './harness.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

/** Deliveries of one subscription, taken one at a time. */
function inbox() {
  const waiting: Delivery[] = [];
  let wake: (() => void) | undefined;
  return {
    onDelivery(delivery: Delivery) {
      waiting.push(delivery);
      wake?.();
    },
    async next(timeoutMs = 10_000): Promise<Delivery> {
      const deadline = Date.now() + timeoutMs;
      while (waiting.length === 0) {
        if (Date.now() > deadline) throw new Error('no delivery in time');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
      return waiting.shift() as Delivery;
    },
  };
}

describe('a copy the broker never confirms', () => {
  it('fails the retry as unconfirmed after confirmTimeoutMs and hands the original back', async () => {
    const { vhosts } = inject('amqp');
    const admin = BrokerAdmin.local();
    if (!vhosts || !admin) {
      throw new Error(
        'this test stalls a quorum queue through rabbitmqctl: run it on the broker host',
      );
    }
    const confirmTimeoutMs = 1_000;
    const transport = rabbitmq(
      testOptions('quorum', { confirmTimeoutMs, retryTiersMs: [100, 1_000] }),
    );
    cleanup.push(() => transport.close());
    const source = uniqueSource('confirm');
    const tier = `${source}.retry.100`;
    const box = inbox();
    const subscription = await transport.subscribe({
      source,
      maxInFlight: 4,
      onDelivery: (d) => box.onDelivery(d),
    });
    cleanup.push(() => subscription.close());
    await transport.publish(source, { requestId: 'stalled-copy', body: { n: 1 } });

    // A first retry declares the tier queue and comes back through it.
    expect(await (await box.next()).retry({ delayMs: 100 })).toBe(true);
    const second = await box.next();
    expect(second.message.requestId).toBe('stalled-copy');

    await admin.suspendQueue(vhosts.main, tier);
    cleanup.push(() => admin.suspendQueue(vhosts.main, tier, false));
    const startedAt = performance.now();
    const failure = await second.retry({ delayMs: 100 }).catch((error: unknown) => error);
    const waitedMs = performance.now() - startedAt;
    expect(failure).toBeInstanceOf(PublishFailedError);
    expect((failure as PublishFailedError).failure).toBe('unconfirmed');
    expect(waitedMs).toBeGreaterThanOrEqual(confirmTimeoutMs - 5);
    expect(waitedMs).toBeLessThan(confirmTimeoutMs + 3_000);

    // The original was handed back to its queue, not held: it is delivered again, while the
    // tier queue is still stalled.
    const third = await box.next();
    expect(third.message.requestId).toBe('stalled-copy');
    expect(third.message.redelivered).toBe(true);
    expect(await third.ack()).toBe(true);

    // Once the tier answers again its late copy arrives too: a duplicate, never a loss.
    await admin.suspendQueue(vhosts.main, tier, false);
    const late = await box.next();
    expect(late.message.requestId).toBe('stalled-copy');
    expect(await late.ack()).toBe(true);
  });
});
