import { randomUUID } from 'node:crypto';
import { HandlerSpy } from '@idemq/conformance';
import {
  createConsumer,
  DeadLetterHeaders,
  type Delivery,
  ErrorCodes,
  memoryStore,
} from '@idemq/core';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaHeaders, type KafkaTransport, TransportUnavailableError } from '../src/index.js';
import {
  admin,
  brokers,
  closedAfterEach,
  createTopics,
  eventually,
  testTransport,
  topicName,
} from './helpers.js';
import { TEST_TIMINGS } from './timings.js';

const opened = closedAfterEach();

function transport(options: Parameters<typeof testTransport>[0] = {}): KafkaTransport {
  const created = testTransport(options);
  opened.push(created);
  return created;
}

/** The group's committed offset of each partition (-1: none). */
async function committed(group: string, topic: string): Promise<Map<number, number>> {
  const [offsets] = await (await admin()).fetchOffsets({
    groupId: `${group}.${topic}`,
    topics: [topic],
  });
  return new Map((offsets?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
}

describe('kafka transport on a real broker', () => {
  it('a source topic that does not exist fails subscribe() with a typed error that names it', async () => {
    const topic = topicName('missing');
    const failure = await transport()
      .subscribe({ source: topic, maxInFlight: 1, onDelivery: () => undefined })
      .then(
        () => new Error('subscribed to a topic that does not exist'),
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(TransportUnavailableError);
    expect((failure as TransportUnavailableError).code).toBe(ErrorCodes.TRANSPORT_UNAVAILABLE);
    expect((failure as Error).message).toContain(`topic "${topic}"`);
    expect((failure as Error).message).toMatch(/UNKNOWN_TOPIC_OR_PARTITION/);
  });

  it('bad input is dead-lettered with reason headers and the partition keeps flowing', async () => {
    const topic = topicName('bad-input');
    await createTopics([topic, `${topic}.dlq`], 1);
    const raw = new Kafka({ clientId: 'idemq-test', brokers, logLevel: logLevel.NOTHING }).producer(
      {
        createPartitioner: Partitioners.DefaultPartitioner,
      },
    );
    await raw.connect();
    opened.push({ close: () => raw.disconnect() });
    const id = (value: string | Buffer) => ({ [KafkaHeaders.requestId]: value });
    // One partition, in order: every bad record sits in front of a good one.
    await raw.send({
      topic,
      acks: -1,
      messages: [
        { value: '{"n":1}' }, // no requestId header
        { value: '{"n":2}', headers: id('x'.repeat(600)) }, // over the 512-byte default
        { value: '{"n":3}', headers: id(Buffer.from([0xc3, 0x28])) }, // not UTF-8
        { value: '{"n":4', headers: id('malformed') }, // does not decode
        { value: '{"n":5}', headers: id('good') },
      ],
    });
    const spy = new HandlerSpy({ timeoutMs: 15_000 });
    const handled: unknown[] = [];
    const consumer = createConsumer({
      transport: spy.wrapTransport(transport()),
      store: memoryStore(),
      source: topic,
      scope: 'bad-input',
      handler: (message) => {
        handled.push(message.value);
      },
    });
    spy.watch(consumer);
    opened.push(consumer);
    await consumer.start();
    await spy.waitFor('good', 'processed');
    expect(handled).toEqual([{ n: 5 }]);

    const reader = transport();
    const dead = new HandlerSpy({ timeoutMs: 15_000 });
    await reader.subscribe({
      source: `${topic}.dlq`,
      maxInFlight: 10,
      onDelivery: dead.onDelivery((d) => void d.ack()),
    });
    const letters = (await dead.waitForCount('delivered', 4)).map((r) => r.data.message);
    expect(letters.map((m) => m.headers[DeadLetterHeaders.code])).toEqual([
      ErrorCodes.REQUEST_ID_MISSING,
      ErrorCodes.REQUEST_ID_TOO_LONG,
      ErrorCodes.REQUEST_ID_INVALID,
      ErrorCodes.PAYLOAD_MALFORMED,
    ]);
    for (const [i, letter] of letters.entries()) {
      expect(letter.headers[DeadLetterHeaders.reason]?.length).toBeGreaterThan(0);
      expect(letter.headers).toMatchObject({
        [DeadLetterHeaders.source]: topic,
        [KafkaHeaders.originalTopic]: topic,
        [KafkaHeaders.originalPartition]: '0',
        [KafkaHeaders.originalOffset]: String(i),
      });
    }
    // The bad records were committed past, not left to block the partition.
    await eventually(async () => (await committed('default', topic)).get(0) === 5, 'commit at 5');
  });

  it('out-of-order acks commit the contiguous prefix only (partitionConcurrency > 1)', async () => {
    const topic = topicName('prefix');
    await createTopics([topic, `${topic}.dlq`], 1);
    const t = transport({ partitionConcurrency: 8 });
    const spy = new HandlerSpy({ timeoutMs: 15_000 });
    await t.subscribe({ source: topic, group: 'g', maxInFlight: 8, onDelivery: spy.onDelivery() });
    for (let i = 0; i < 5; i++) await t.publish(topic, { requestId: `m${i}`, body: `${i}` });
    const d = (await spy.waitForCount('delivered', 5)).map((r) => r.data.delivery);
    const ack = async (i: number) => expect(await (d[i] as Delivery).ack()).toBe(true);
    await ack(2);
    await ack(3);
    await ack(4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await committed('g', topic)).get(0) ?? -1).toBeLessThanOrEqual(0);
    await ack(0);
    await eventually(async () => (await committed('g', topic)).get(0) === 1, 'commit at 1');
    await ack(1);
    await eventually(async () => (await committed('g', topic)).get(0) === 5, 'commit at 5');
  });

  it('rebalance: a moved partition is revoked (its acks resolve false), a kept one carries over', async () => {
    const topic = topicName('rebalance');
    await createTopics([topic, `${topic}.dlq`], 2);
    const first = transport();
    const spyFirst = new HandlerSpy({ timeoutMs: 15_000 });
    const firstSubscription = await first.subscribe({
      source: topic,
      group: 'g',
      maxInFlight: 4,
      onDelivery: spyFirst.onDelivery(),
    });
    expect(firstSubscription.health()).toEqual({ status: 'up' });
    // One message per partition (explicit keys that land on 0 and 1 are found by trial).
    const byPartition = new Map<number, string>();
    for (let i = 0; byPartition.size < 2; i++) {
      const requestId = `r${i}`;
      await first.publish(topic, { requestId, body: 'x', key: `key-${i}` });
      const { message } = (await spyFirst.waitFor(requestId, 'delivered')).data;
      const { partition } = message.raw as { partition: number };
      if (byPartition.has(partition)) {
        await (await spyFirst.waitFor(requestId, 'delivered')).data.delivery.ack();
      } else byPartition.set(partition, requestId);
    }

    // The first member's health while the second joins: a rebalance is degraded, never down.
    const seen = new Set<string>();
    const sampler = setInterval(() => seen.add(firstSubscription.health().status), 2);
    const second = transport();
    const spySecond = new HandlerSpy({ timeoutMs: 15_000 });
    const secondSubscription = await second.subscribe({
      source: topic,
      group: 'g',
      maxInFlight: 4,
      onDelivery: spySecond.onDelivery(),
    });
    // Two members, two partitions: one moved to the second member, one stayed.
    const ids = [...byPartition.values()];
    await eventually(() => ids.some((id) => spySecond.count('delivered', id) > 0), 'the move');
    await eventually(() => firstSubscription.health().status === 'up', 'the first member up');
    clearInterval(sampler);
    expect([...seen].sort()).toEqual(['degraded', 'up']);
    expect(secondSubscription.health()).toEqual({ status: 'up' });
    const moved = ids.find((id) => spySecond.count('delivered', id) > 0) as string;
    const kept = ids.find((id) => id !== moved) as string;
    const movedCopy = (await spySecond.waitFor(moved, 'delivered')).data;
    expect(movedCopy.message.redelivered).toBe(true);
    expect(await (await spyFirst.waitFor(moved, 'delivered')).data.delivery.ack()).toBe(false);
    expect(await (await spyFirst.waitFor(kept, 'delivered')).data.delivery.ack()).toBe(true);
    expect(spyFirst.count('delivered', kept)).toBe(1);
    expect(await movedCopy.delivery.ack()).toBe(true);
    expect(spySecond.count('delivered', kept)).toBe(0);
  });

  it('heartbeats go on during a handler longer than the session timeout: no rebalance, one run', async () => {
    const topic = topicName('slow');
    await createTopics([topic, `${topic}.dlq`], 1);
    const store = memoryStore();
    const spy = new HandlerSpy({ timeoutMs: 30_000 });
    const slowMs = TEST_TIMINGS.sessionTimeoutMs + 2_000;
    for (let i = 0; i < 2; i++) {
      const consumer = createConsumer({
        transport: spy.wrapTransport(transport()),
        store,
        source: topic,
        scope: 'slow',
        leaseMs: 2_000,
        handler: spy.wrapHandler(() => new Promise((resolve) => setTimeout(resolve, slowMs))),
      });
      spy.watch(consumer);
      opened.push(consumer);
      await consumer.start();
    }
    const publisher = transport();
    const id = `slow-${randomUUID()}`;
    await publisher.publish(topic, { requestId: id, body: {} });
    await spy.waitFor(id, 'processed', { timeoutMs: slowMs + 10_000 });
    expect(spy.count('delivered', id)).toBe(1);
    expect(spy.count('handler-started', id)).toBe(1);
    expect(spy.all('acked', id).map((r) => r.data.ok)).toEqual([true]);
  }, 40_000);

  // kafkajs asks metadata for every topic a client ever looked up; once one is deleted, each
  // refresh of that client fails and is retried for ~60 s (kafkajs #651, #1622). Before each
  // subscription had its own admin, the second start below took 64 s instead of 1 s.
  it('a topic deleted after its subscription closed does not stall the next subscribe on the same transport', async () => {
    const consuming = transport();
    const publisher = transport();
    const store = memoryStore();
    const [first, second] = [topicName('deleted'), topicName('after-delete')];
    await createTopics([first, `${first}.dlq`, second, `${second}.dlq`], 1);
    const consumeOne = async (topic: string) => {
      const spy = new HandlerSpy({ timeoutMs: 10_000 });
      const consumer = createConsumer({
        transport: spy.wrapTransport(consuming),
        store,
        source: topic,
        scope: 'deleted-topic',
        handler: spy.wrapHandler(() => undefined),
      });
      spy.watch(consumer);
      await consumer.start();
      const id = `${topic}-1`;
      await publisher.publish(topic, { requestId: id, body: {} });
      await spy.waitFor(id, 'processed');
      await consumer.stop();
    };
    await consumeOne(first);
    await (await admin()).deleteTopics({ topics: [first] });
    // Within the test's timeout (30 s): the stall this guards against lasted over a minute.
    await consumeOne(second);
  });

  it('retry topic: the retried message travels through <source>.retry with its attempt, the source is committed', async () => {
    const topic = topicName('retry-topic');
    await createTopics([topic, `${topic}.dlq`], 1);
    const t = transport({ retryMode: 'topic' });
    const spy = new HandlerSpy({ timeoutMs: 15_000 });
    await t.subscribe({ source: topic, group: 'g', maxInFlight: 4, onDelivery: spy.onDelivery() });
    // Another group of the source reads the same retry topic and must pass over g's retries.
    const other = new HandlerSpy({ timeoutMs: 15_000 });
    await t.subscribe({
      source: topic,
      group: 'other',
      maxInFlight: 4,
      onDelivery: other.onDelivery((d) => void d.ack()),
    });
    expect(await (await admin()).listTopics()).toContain(`${topic}.retry`);
    await t.publish(topic, { requestId: 'r', body: 'x', key: 'k' });
    const first = (await spy.waitFor('r', 'delivered')).data;
    const retriedAt = Date.now();
    expect(await first.delivery.retry({ delayMs: 400 })).toBe(true);
    const second = (await spy.waitFor('r', 'delivered', { count: 2 })).data;
    expect(Date.now() - retriedAt).toBeGreaterThanOrEqual(400);
    expect(second.message).toMatchObject({
      source: topic,
      attempt: 2,
      redelivered: true,
      key: 'k',
    });
    expect((second.message.raw as { topic: string }).topic).toBe(`${topic}.retry`);
    expect(second.message.headers[KafkaHeaders.retryAttempt]).toBeUndefined();
    await eventually(async () => (await committed('g', topic)).get(0) === 1, 'source commit');
    expect(await second.delivery.ack()).toBe(true);
    await eventually(async () => (await t.backlog(topic, 'g')).delayed === 0, 'retry topic commit');
    await eventually(async () => (await t.backlog(topic, 'other')).delayed === 0, 'passed over');
    expect(other.count('delivered', 'r')).toBe(1);
  });
});
