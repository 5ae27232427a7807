import type { Delivery, Logger } from '@idemq/core';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { rabbitmq, TransportUnavailableError } from '../src/index.js';
import { BrokerAdmin, cuttableConnections } from './broker.js';
import { testOptions, uniqueSource } from './harness.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

/** How long `call` took to fail, and with what. */
async function failureOf(call: Promise<unknown>): Promise<{ error: unknown; waitedMs: number }> {
  const startedAt = performance.now();
  const error = await call.then(
    () => new Error('expected a failure, got an answer'),
    (failure: unknown) => failure,
  );
  return { error, waitedMs: performance.now() - startedAt };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const rpcTimeoutMs = 1_000;

/** rabbitmqctl and the test vhost: these tests suspend a queue's process. */
function brokerAdmin() {
  const { vhosts } = inject('amqp');
  const admin = BrokerAdmin.local();
  if (!vhosts || !admin) {
    throw new Error('this test suspends a queue through rabbitmqctl: run it on the broker host');
  }
  return {
    vhost: vhosts.main,
    admin,
    /** Suspends `queue` (resumed at the test's end at the latest). */
    async suspend(queue: string) {
      await admin.suspendQueue(vhosts.main, queue);
      cleanup.push(() => admin.suspendQueue(vhosts.main, queue, false));
    },
    resume: (queue: string) => admin.suspendQueue(vhosts.main, queue, false),
  };
}

describe('a queue whose process does not answer', () => {
  it('fails subscribe() after rpcTimeoutMs instead of hanging, and leaves nothing behind', async () => {
    const broker = brokerAdmin();
    const options = testOptions('classic', { rpcTimeoutMs });
    const transport = rabbitmq(options);
    cleanup.push(() => transport.close());
    const source = uniqueSource('rpc');
    const { queue } = await transport.declare(source, 'default');
    await broker.suspend(queue);
    const received: Delivery[] = [];
    const acks: Array<Promise<boolean>> = [];
    const request = {
      source,
      maxInFlight: 8,
      onDelivery: (delivery: Delivery) => {
        received.push(delivery);
        acks.push(delivery.ack());
      },
    };

    // This connection declared already: the consume is what goes unanswered.
    const consuming = await failureOf(transport.subscribe(request));
    expect(consuming.error).toBeInstanceOf(TransportUnavailableError);
    expect((consuming.error as TransportUnavailableError).retriable).toBe(true);
    expect((consuming.error as Error).message).toMatch(
      new RegExp(`basic\\.consume on queue "${queue}" within ${rpcTimeoutMs} ms`),
    );
    expect(consuming.waitedMs).toBeGreaterThanOrEqual(rpcTimeoutMs - 5);
    expect(consuming.waitedMs).toBeLessThan(rpcTimeoutMs + 3_000);

    // A new connection declares first: the queue's declaration is what goes unanswered.
    const fresh = rabbitmq(options);
    cleanup.push(() => fresh.close());
    const declaring = await failureOf(fresh.subscribe(request));
    expect(declaring.error).toBeInstanceOf(TransportUnavailableError);
    expect((declaring.error as Error).message).toMatch(
      new RegExp(`declaration of queue "${queue}" within ${rpcTimeoutMs} ms`),
    );
    expect(declaring.waitedMs).toBeLessThan(rpcTimeoutMs + 3_000);

    // The queue answers again: the abandoned channels close and take their late consumer
    // with them; a new subscription gets every message once.
    await broker.resume(queue);
    await until('the abandoned consumer to go', async () => {
      return (await broker.admin.queues(broker.vhost)).get(queue)?.consumers === 0;
    });
    const ids = Array.from({ length: 20 }, (_, n) => `after-${n}`);
    for (const requestId of ids) await transport.publish(source, { requestId, body: { n: 1 } });
    const subscription = await fresh.subscribe(request);
    cleanup.push(() => subscription.close());
    await until('every message', async () => received.length >= ids.length);
    expect(await Promise.all(acks)).toEqual(ids.map(() => true));
    expect(received.map((d) => d.message.requestId).sort()).toEqual([...ids].sort());
    await until('the queue to drain', async () => {
      const counts = (await broker.admin.queues(broker.vhost)).get(queue);
      return counts?.ready === 0 && counts.unacked === 0;
    });
    expect((await broker.admin.queues(broker.vhost)).get(queue)?.consumers).toBe(1);
    expect(received).toHaveLength(ids.length);
  });

  it('stops and closes within rpcTimeoutMs; the delivery it held comes back redelivered', async () => {
    const broker = brokerAdmin();
    const options = testOptions('classic', { rpcTimeoutMs });
    const transport = rabbitmq(options);
    cleanup.push(() => transport.close());
    const source = uniqueSource('rpc-stop');
    const held: Delivery[] = [];
    const subscription = await transport.subscribe({
      source,
      maxInFlight: 4,
      onDelivery: (delivery) => held.push(delivery),
    });
    await transport.publish(source, { requestId: 'held-while-stuck', body: { n: 1 } });
    await until('the delivery', async () => held.length === 1);
    const { queue } = await transport.declare(source, 'default');
    await broker.suspend(queue);

    // basic.cancel goes unanswered: stop() drops the channel instead of waiting for ever.
    const stopping = performance.now();
    await subscription.stop();
    expect(performance.now() - stopping).toBeLessThan(rpcTimeoutMs + 3_000);
    const [delivery] = held as [Delivery];
    expect(await delivery.ack().catch(() => false)).toBe(false);

    // The connection's close waits on that channel: after rpcTimeoutMs its socket is destroyed.
    const sockets = () =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'TCPSocketWrap').length;
    const socketsBefore = sockets();
    const closing = performance.now();
    await subscription.close();
    await transport.close();
    expect(performance.now() - closing).toBeLessThan(2 * rpcTimeoutMs + 3_000);
    await until('the socket to go', async () => sockets() === socketsBefore - 1, 2_000);

    await broker.resume(queue);
    const again = rabbitmq(options);
    cleanup.push(() => again.close());
    const redelivered: Delivery[] = [];
    const next = await again.subscribe({
      source,
      maxInFlight: 4,
      onDelivery: (d) => redelivered.push(d),
    });
    cleanup.push(() => next.close());
    await until('the redelivery', async () => redelivered.length === 1);
    const [back] = redelivered as [Delivery];
    expect(back.message.requestId).toBe('held-while-stuck');
    expect(back.message.redelivered).toBe(true);
    expect(await back.ack()).toBe(true);
  });

  /**
   * Cuts the connection of a consuming subscription while its queue's process does not answer:
   * the re-subscription's `stuckStep` must time out, be tried again with backoff, and consuming
   * resume once the queue answers.
   */
  async function resubscribeWhileStuck(queueType: 'classic' | 'quorum', stuckStep: RegExp) {
    const broker = brokerAdmin();
    const { url, ...options } = testOptions(queueType, {
      rpcTimeoutMs,
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    const failures: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (obj, msg) => {
        if (msg?.includes('subscribing again failed'))
          failures.push(String(Reflect.get(obj, 'error')));
      },
    };
    const connections = cuttableConnections(url);
    const transport = rabbitmq({ ...options, connection: connections.connect, logger });
    cleanup.push(() => transport.close());
    const source = uniqueSource('rpc-revive');
    const received: string[] = [];
    const subscription = await transport.subscribe({
      source,
      maxInFlight: 4,
      onDelivery: (delivery: Delivery) => {
        received.push(String(delivery.message.requestId));
        void delivery.ack();
      },
    });
    cleanup.push(() => subscription.close());
    const { queue } = await transport.declare(source, 'default');
    await broker.suspend(queue);

    // The connection drops; the new one must declare and consume again, and the queue does not
    // answer one of them.
    connections.cut();
    const failed = () => failures.filter((failure) => stuckStep.test(failure.replace(queue, 'Q')));
    await until('the stuck step to time out twice', async () => failed().length >= 2);
    expect(failed()[0]).toContain(`within ${rpcTimeoutMs} ms`);
    expect(subscription.health().status).toBe('degraded');

    await broker.resume(queue);
    await until('consuming again', async () => subscription.health().status === 'up');
    await transport.publish(source, { requestId: 'after-the-outage', body: { n: 1 } });
    await until('the message', async () => received.includes('after-the-outage'));
    expect(received.filter((id) => id === 'after-the-outage')).toHaveLength(1);
  }

  it('a re-subscription whose declaration goes unanswered tries again until the queue answers', async () => {
    // A suspended classic queue leaves even its declaration unanswered.
    await resubscribeWhileStuck('classic', /declaration of queue "Q"/);
  });

  it('a re-subscription whose consume goes unanswered tries again until the queue answers', async () => {
    // With a quorum queue's process suspended, RabbitMQ 3.10 still answers its declaration
    // (within ~250 ms, as measured) but not the consume.
    await resubscribeWhileStuck('quorum', /basic\.consume on queue "Q"/);
  });
});
