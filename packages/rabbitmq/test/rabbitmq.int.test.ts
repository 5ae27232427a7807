import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HandlerSpy } from '@idemq/conformance';
import { createConsumer, type Delivery, memoryStore, TransportClosedError } from '@idemq/core';
import amqplib, { type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  InternalHeaders,
  PublishFailedError,
  type RabbitmqOptions,
  type RabbitmqTransport,
  rabbitmq,
  TransportUnavailableError,
} from '../src/index.js';
import { testOptions, uniqueSource } from './harness.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

function open(extra: Partial<RabbitmqOptions> = {}): RabbitmqTransport {
  const transport = rabbitmq(testOptions('quorum', extra));
  cleanup.push(() => transport.close());
  return transport;
}

async function raw(): Promise<ChannelModel> {
  const model = await amqplib.connect(inject('amqp').url);
  cleanup.push(() => model.close());
  return model;
}

/** The next message of `queue`, read with a raw amqplib consumer (acked). */
async function nextRaw(model: ChannelModel, queue: string): Promise<ConsumeMessage> {
  const channel = await model.createChannel();
  return new Promise((resolve) => {
    void channel.consume(queue, (message) => {
      if (!message) return;
      channel.ack(message);
      resolve(message);
    });
  });
}

async function subscribeSpy(transport: RabbitmqTransport, source: string, maxInFlight = 10) {
  const spy = new HandlerSpy({ timeoutMs: 10_000 });
  const subscription = await transport.subscribe({
    source,
    maxInFlight,
    onDelivery: spy.onDelivery(),
  });
  cleanup.push(() => subscription.close());
  return { spy, subscription };
}

describe('publishing', () => {
  it('publishes persistent, mandatory, confirmed messages: messageId = requestId, headers kept', async () => {
    const transport = open();
    const source = uniqueSource('pub');
    const { queue } = await transport.declare(source);
    const before = Math.floor(Date.now() / 1000);
    const receipt = await transport.publish(source, {
      requestId: 'order-1',
      body: { amount: 10 },
      headers: { traceparent: 't-1', 'x-custom': 'é' },
      key: 'customer-7',
    });
    expect(receipt).toEqual({ requestId: 'order-1' });

    const message = await nextRaw(await raw(), queue);
    expect(message.properties).toMatchObject({
      messageId: 'order-1',
      deliveryMode: 2,
      contentType: 'application/json',
    });
    expect(message.properties.timestamp).toBeGreaterThanOrEqual(before);
    expect(message.properties.headers).toMatchObject({
      traceparent: 't-1',
      'x-custom': 'é',
      [InternalHeaders.key]: 'customer-7',
    });
    expect(message.fields).toMatchObject({ exchange: source, routingKey: 'customer-7' });
    expect(JSON.parse(message.content.toString())).toEqual({ amount: 10 });
  });

  it('refuses an unroutable publish (no queue bound) as PublishFailedError, and keeps working', async () => {
    const transport = open();
    const nowhere = uniqueSource('nowhere');
    const error = await transport.publish(nowhere, { body: 'lost?' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PublishFailedError);
    expect(error).toMatchObject({
      code: 'IDEMQ_ERR_PUBLISH_FAILED',
      failure: 'unroutable',
      retriable: false,
      destination: nowhere,
    });

    const source = uniqueSource('pub');
    const { queue } = await transport.declare(source);
    await transport.publish(source, { requestId: 'after-return', body: 'x' });
    const model = await raw();
    expect((await nextRaw(model, queue)).properties.messageId).toBe('after-return');
  });

  it('carries a requestId longer than the 255-byte messageId in a header, end to end', async () => {
    const transport = open();
    const source = uniqueSource('long-id');
    const longId = `id-${'é'.repeat(200)}`; // 403 bytes: over AMQP's short string, under 512
    const runs: string[] = [];
    const consumer = createConsumer({
      transport,
      store: memoryStore(),
      source,
      scope: 'long-id',
      handler: (message) => {
        runs.push(message.requestId);
      },
    });
    const processed = new Promise<string>((resolve) =>
      consumer.on('processed', ({ requestId }) => resolve(requestId)),
    );
    await consumer.start();
    cleanup.push(() => consumer.stop());
    expect((await transport.publish(source, { requestId: longId, body: { n: 1 } })).requestId).toBe(
      longId,
    );
    expect(await processed).toBe(longId);
    expect(runs).toEqual([longId]);
  });

  it('rejects at once when the transport is closed, and when the broker cannot be reached', async () => {
    const closed = open();
    await closed.close();
    await expect(closed.publish('x', { body: 'x' })).rejects.toBeInstanceOf(TransportClosedError);

    const unreachable = rabbitmq({ url: 'amqp://guest:guest@127.0.0.1:1', connectTimeoutMs: 300 });
    cleanup.push(() => unreachable.close());
    const startedAt = performance.now();
    const error = await unreachable.publish('x', { body: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(error).toMatchObject({ code: 'IDEMQ_ERR_TRANSPORT_UNAVAILABLE', retriable: true });
    expect(performance.now() - startedAt).toBeLessThan(3_000);
    await expect(
      unreachable.subscribe({ source: 'x', maxInFlight: 1, onDelivery: () => undefined }),
    ).rejects.toBeInstanceOf(TransportUnavailableError);
  });
});

describe('delayed retry through TTL tiers', () => {
  it('rounds a delay up to the next tier: never early', async () => {
    const transport = open({ retryTiersMs: [100, 400] });
    const source = uniqueSource('tier');
    const { spy } = await subscribeSpy(transport, source);
    await transport.publish(source, { requestId: 'r', body: 'x' });
    const first = (await spy.waitFor('r', 'delivered')).data.delivery;
    const retriedAt = performance.now();
    expect(await first.retry({ delayMs: 150 })).toBe(true);
    const second = await spy.waitFor('r', 'delivered', { count: 2 });
    expect(second.at - retriedAt).toBeGreaterThanOrEqual(395);
    expect(second.data.message).toMatchObject({ attempt: 2, redelivered: true });
    expect(await second.data.delivery.ack()).toBe(true);

    const channel = await (await raw()).createChannel();
    expect((await channel.checkQueue(`${source}.retry.400`)).messageCount).toBe(0);
  });

  it('a delay longer than the largest tier hops through it unseen, and counts one attempt', async () => {
    const transport = open({ retryTiersMs: [100, 200] });
    const source = uniqueSource('hop');
    const { spy } = await subscribeSpy(transport, source);
    await transport.publish(source, { requestId: 'h', body: 'x', headers: { keep: 'me' } });
    const first = (await spy.waitFor('h', 'delivered')).data.delivery;
    const retriedAt = performance.now();
    expect(await first.retry({ delayMs: 700 })).toBe(true);
    const second = await spy.waitFor('h', 'delivered', { count: 2 });
    expect(second.at - retriedAt).toBeGreaterThanOrEqual(695);
    expect(second.data.message.attempt).toBe(2);
    expect(second.data.message.headers).toEqual({ keep: 'me' });
    expect(await second.data.delivery.ack()).toBe(true);
    await sleep(300);
    expect(spy.count('delivered', 'h')).toBe(2);
  });
});

describe('topology', () => {
  it('refuses a queue that exists with other arguments, saying what to do', async () => {
    const source = uniqueSource('mismatch');
    await open().declare(source); // a quorum queue
    const classic = rabbitmq(testOptions('classic'));
    cleanup.push(() => classic.close());
    const error = await classic
      .subscribe({ source, maxInFlight: 1, onDelivery: () => undefined })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(String((error as Error).message)).toMatch(/exists with other arguments/);
    expect(error).toMatchObject({ retriable: false });
  });

  it('names exchanges and queues with exchangeName / queueName (a namespace, say)', async () => {
    const prefix = uniqueSource('ns');
    const transport = open({
      exchangeName: (destination) => `${prefix}.${destination}`,
      queueName: (source, group) => `${prefix}.${source}.${group}`,
    });
    expect(await transport.declare('orders', 'billing')).toEqual({
      exchange: `${prefix}.orders`,
      queue: `${prefix}.orders.billing`,
      deadLetterExchange: `${prefix}.orders.dlq`,
      deadLetterQueue: `${prefix}.orders.dlq.default`,
    });
    await transport.publish('orders', { requestId: 'ns-1', body: 'x' });
    const message = await nextRaw(await raw(), `${prefix}.orders.billing`);
    expect(message.fields.exchange).toBe(`${prefix}.orders`);
    expect(message.properties.messageId).toBe('ns-1');
  });

  it('consumes an existing topology with declare: false and queueName, and says when it is missing', async () => {
    const model = await raw();
    const setup = await model.createChannel();
    const source = uniqueSource('legacy');
    const legacyQueue = `${source}-the-old-queue`;
    const options = { declare: false, queueName: () => legacyQueue };
    const transport = open(options);

    const missing = await transport
      .subscribe({ source, maxInFlight: 1, onDelivery: () => undefined })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TransportUnavailableError);
    expect(String((missing as Error).message)).toMatch(/does not exist/);

    await setup.assertExchange(source, 'fanout', { durable: true });
    await setup.assertExchange(`${source}.dlq`, 'fanout', { durable: true });
    await setup.assertQueue(legacyQueue, { durable: true });
    await setup.bindQueue(legacyQueue, source, '');
    const { spy } = await subscribeSpy(transport, source);
    await transport.publish(source, { requestId: 'legacy-1', body: 'x' });
    const { delivery } = (await spy.waitFor('legacy-1', 'delivered')).data;
    expect(await delivery.ack()).toBe(true);
  });
});

describe('resilience', () => {
  it('re-subscribes after a server-side cancel (queue deleted); in-flight deliveries stay settleable', async () => {
    const transport = open();
    const source = uniqueSource('cancel');
    const { spy } = await subscribeSpy(transport, source);
    await transport.publish(source, { requestId: 'before', body: 'x' });
    const held: Delivery = (await spy.waitFor('before', 'delivered')).data.delivery;

    const admin = await (await raw()).createChannel();
    await admin.deleteQueue(source); // the broker cancels the consumer: callback(null)
    // The transport declares the queue again and consumes from it.
    let after = '';
    for (let i = 0; i < 100 && spy.count('delivered', after) === 0; i++) {
      after = `after-${i}`;
      await transport.publish(source, { requestId: after, body: 'x' }).catch(() => undefined);
      await sleep(50);
    }
    const { delivery } = (await spy.waitFor(after, 'delivered')).data;
    expect(await delivery.ack()).toBe(true);
    // Its queue is gone, but the channel lives: the ack is accepted, not a 406.
    expect(await held.ack()).toBe(true);
    await transport.publish(source, { requestId: 'still-alive', body: 'x' });
    expect(await (await spy.waitFor('still-alive', 'delivered')).data.delivery.ack()).toBe(true);
  });

  it('replaces a consumer channel the broker closed; its deliveries are never settled on the new one', async () => {
    // Capture the confirm channels the transport opens (its subscription's) to break one.
    const channels: ConfirmChannel[] = [];
    const connection = async () => {
      const model = await amqplib.connect(inject('amqp').url);
      const create = model.createConfirmChannel.bind(model);
      model.createConfirmChannel = async (options) => {
        const channel = await create(options);
        channels.push(channel);
        return channel;
      };
      return model;
    };
    const consumerSide = open({ url: undefined, connection });
    const publisher = open();
    const source = uniqueSource('channel');
    const { spy } = await subscribeSpy(consumerSide, source, 1);
    await publisher.publish(source, { requestId: 'held', body: 'x' });
    const first = (await spy.waitFor('held', 'delivered')).data;
    expect(channels).toHaveLength(1);

    // A passive declare of a missing queue: the broker closes that channel (404 NOT_FOUND).
    await channels[0]?.checkQueue(`missing-${randomUUID()}`).catch(() => undefined);
    const again = (await spy.waitFor('held', 'delivered', { count: 2 })).data;
    expect(await first.delivery.ack(), 'ack through the dead channel').toBe(false);
    expect(again.message).toMatchObject({ redelivered: true, attempt: 2, attemptSource: 'exact' });
    expect(await again.delivery.ack()).toBe(true);
    expect(channels).toHaveLength(2);

    await publisher.publish(source, { requestId: 'next', body: 'y' });
    expect(await (await spy.waitFor('next', 'delivered')).data.delivery.ack()).toBe(true);
    await sleep(200);
    expect(spy.count('delivered', 'held')).toBe(2);
  });

  it('never closes a connection it was given, and reports when that connection dies', async () => {
    const model = await amqplib.connect(inject('amqp').url);
    const transport = rabbitmq(testOptions('quorum', { url: undefined, connection: model }));
    const errors: Error[] = [];
    const source = uniqueSource('given');
    await transport.subscribe({
      source,
      maxInFlight: 1,
      onDelivery: (d) => void d.ack(),
      onError: (e) => errors.push(e),
    });
    await model.close();
    for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(20);
    expect(errors[0]).toBeInstanceOf(TransportUnavailableError);
    expect(errors[0]).toMatchObject({ retriable: false });
    await transport.close();

    const kept = await amqplib.connect(inject('amqp').url);
    cleanup.push(() => kept.close());
    const other = rabbitmq(testOptions('quorum', { url: undefined, connection: kept }));
    await other.declare(uniqueSource('given'));
    await other.close();
    // Still usable: the transport closed only its own channels.
    await (await kept.createChannel()).close();
  });

  it('stop() stops fetching while handed-out deliveries can still be settled', async () => {
    const transport = open();
    const source = uniqueSource('stop');
    const { spy, subscription } = await subscribeSpy(transport, source, 1);
    await transport.publish(source, { requestId: 'one', body: '1' });
    const held = (await spy.waitFor('one', 'delivered')).data.delivery;
    await subscription.stop();
    await transport.publish(source, { requestId: 'two', body: '2' });
    await sleep(200);
    expect(spy.count('delivered', 'two')).toBe(0);
    expect(await held.ack()).toBe(true);
    await subscription.close();
    const next = await subscribeSpy(transport, source, 1);
    expect(await (await next.spy.waitFor('two', 'delivered')).data.delivery.ack()).toBe(true);
  });
});

describe('requestId', () => {
  it('is the raw messageId, unvalidated, for the engine to judge', async () => {
    const transport = open();
    const source = uniqueSource('raw-id');
    const { spy } = await subscribeSpy(transport, source);
    const channel = await (await raw()).createConfirmChannel();
    channel.publish(source, '', Buffer.from('x'), { headers: { marker: randomUUID() } });
    await channel.waitForConfirms();
    const [record] = await spy.waitForCount('delivered', 1);
    expect(record?.data.message.requestId).toBeUndefined();
    expect(record?.data.message.attempt).toBe(1);
    expect(await record?.data.delivery.ack()).toBe(true);
  });
});
