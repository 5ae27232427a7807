import {
  ChangeMessageVisibilityCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { HandlerSpy } from '@idemq/conformance';
import { type Delivery, InvalidOptionsError } from '@idemq/core';
import { TcpProxy } from '@idemq/services';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  DelayTooLongError,
  declareQueue,
  deleteQueue,
  MAX_VISIBILITY_MS,
  MessageAttributeNames,
  PayloadTooLargeError,
  queueDepth,
  type SqsTransportOptions,
  sqs,
  TransportUnavailableError,
} from '../src/index.js';
import { adminClient, clientConfig, QueueFactory, uniqueQueueName } from './helpers.js';

const admin = adminClient();
const queues = new QueueFactory(admin);
const opened: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const resource of opened.reverse()) await resource.close();
  await queues.deleteAll();
  admin.destroy();
});

function connect(options: SqsTransportOptions = {}) {
  const transport = sqs({ clientConfig, waitTimeMs: 1_000, ...options });
  opened.push(transport);
  return transport;
}

async function subscribe(
  transport: ReturnType<typeof sqs>,
  source: string,
  react?: (delivery: Delivery) => void | Promise<void>,
  maxInFlight = 10,
) {
  const spy = new HandlerSpy({ timeoutMs: 10_000 });
  const subscription = await transport.subscribe({
    source,
    maxInFlight,
    onDelivery: spy.onDelivery(react),
  });
  opened.push(subscription);
  return { spy, subscription };
}

/** Receives straight from SQS (no transport), for looking at what is on a queue. */
async function receiveRaw(url: string, waitSeconds = 1): Promise<Message[]> {
  const { Messages = [] } = await admin.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return Messages;
}

describe('publish', () => {
  it('round-trips binary, empty and text bodies and 40 headers (one packed attribute)', async () => {
    const name = uniqueQueueName('bodies');
    await queues.create(name);
    const transport = connect();
    const { spy } = await subscribe(transport, name, (d) => void d.ack());
    const headers = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`h-${i}`, `é${i}`]));
    const bodies = [Uint8Array.from([0, 0xff, 0x80]), new Uint8Array(0), 'plain ✓'];
    for (const [i, body] of bodies.entries()) {
      await transport.publish(name, { requestId: `b-${i}`, body, headers });
    }
    for (const [i, body] of bodies.entries()) {
      const { message } = (await spy.waitFor(`b-${i}`, 'delivered')).data;
      expect(Buffer.from(message.body)).toEqual(
        typeof body === 'string' ? Buffer.from(body) : Buffer.from(body),
      );
      expect(message.headers).toEqual(headers);
    }
  });

  it('refuses an oversized message before sending, with PayloadTooLargeError', async () => {
    const name = uniqueQueueName('size');
    const url = await queues.create(name);
    const transport = connect();
    const send = vi.spyOn(transport.client, 'send');
    const body = 'x'.repeat(262_144);
    await expect(transport.publish(name, { requestId: 'big', body })).rejects.toMatchObject({
      name: 'PayloadTooLargeError',
      code: 'IDEMQ_ERR_PUBLISH_FAILED',
      maxBytes: 262_144,
    });
    expect(send).not.toHaveBeenCalled();
    // A transport told the queue takes 1 MiB sends it.
    const large = connect({ maxPayloadBytes: 1_048_576 });
    await expect(large.publish(name, { requestId: 'big', body })).resolves.toEqual({
      requestId: 'big',
    });
    expect((await receiveRaw(url))[0]?.Body?.length).toBe(262_144);
    await expect(
      large.publish(name, { requestId: 'huge', body: 'x'.repeat(1_048_576) }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('FIFO: the key becomes the group (hashed when SQS refuses its characters), the requestId the deduplication id', async () => {
    const name = uniqueQueueName('fifo-ids', true);
    const url = await queues.create(name);
    const transport = connect({ fifo: true });
    await transport.publish(name, { requestId: 'same id', body: 'one', key: 'clé 1' });
    await transport.publish(name, { requestId: 'same id', body: 'two', key: 'clé 1' });
    await transport.publish(name, { requestId: 'r-2', body: 'three', key: 'k2' });
    const messages = await receiveRaw(url);
    expect(messages.map((m) => m.Body).sort()).toEqual(['one', 'three']);
    const first = messages.find((m) => m.Body === 'one');
    expect(first?.Attributes?.MessageGroupId).toMatch(/^[0-9a-f]{64}$/);
    expect(first?.Attributes?.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(messages.find((m) => m.Body === 'three')?.Attributes).toMatchObject({
      MessageGroupId: 'k2',
      MessageDeduplicationId: 'r-2',
    });
  });

  it('refuses a queue of the other kind, and resolves sources through queueOf or as URLs', async () => {
    const name = uniqueQueueName('kinds');
    const url = await queues.create(name);
    await expect(connect({ fifo: true }).publish(name, { body: 'x' })).rejects.toBeInstanceOf(
      InvalidOptionsError,
    );
    const mapped = connect({ queueOf: (source) => (source === 'orders' ? name : source) });
    await mapped.publish('orders', { requestId: 'via-map', body: 'x' });
    await mapped.publish(url, { requestId: 'via-url', body: 'x' });
    const ids = (await receiveRaw(url)).map(
      (m) => m.MessageAttributes?.[MessageAttributeNames.requestId]?.StringValue,
    );
    expect(ids.sort()).toEqual(['via-map', 'via-url']);
  });
});

describe('a missing queue', () => {
  it('publish and subscribe fail with TransportUnavailableError (not retriable), naming the queue', async () => {
    const transport = connect();
    const missing = uniqueQueueName('missing');
    for (const attempt of [
      transport.publish(missing, { body: 'x' }),
      transport.subscribe({ source: missing, maxInFlight: 1, onDelivery: () => undefined }),
    ]) {
      const error = await attempt.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(TransportUnavailableError);
      expect(error).toMatchObject({ code: 'IDEMQ_ERR_TRANSPORT_UNAVAILABLE', retriable: false });
      expect(String(error)).toContain(missing);
    }
  });

  it('a queue deleted under a running subscription stops it and reports onError', {
    timeout: 30_000,
  }, async () => {
    const name = uniqueQueueName('deleted');
    const url = await queues.create(name);
    const transport = connect();
    const errors: Error[] = [];
    const subscription = await transport.subscribe({
      source: name,
      maxInFlight: 1,
      onDelivery: () => undefined,
      onError: (error) => errors.push(error),
    });
    await deleteQueue(admin, url);
    // ElasticMQ may leave the poll in flight unanswered: the receive guard gives up on it after
    // the wait time + 10 s, and the next receive learns the queue is gone.
    const deadline = performance.now() + 15_000;
    while (errors.length === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(errors[0]).toMatchObject({ code: 'IDEMQ_ERR_TRANSPORT_UNAVAILABLE', retriable: false });
    expect(subscription.health()).toMatchObject({
      status: 'down',
      reason: expect.stringContaining('receive failed for good'),
    });
  });
});

describe('health', () => {
  it('degraded while receives fail (every connection cut), up again once they succeed', {
    timeout: 30_000,
  }, async () => {
    const name = uniqueQueueName('health');
    await queues.create(name);
    const target = new URL(String(clientConfig.endpoint));
    const proxy = await TcpProxy.start(target.hostname, Number(target.port));
    const transport = sqs({
      clientConfig: { ...clientConfig, endpoint: `http://127.0.0.1:${proxy.port}` },
      waitTimeMs: 1_000,
    });
    opened.push(transport, proxy);
    const { spy, subscription } = await subscribe(transport, name, (d) => void d.ack());
    expect(subscription.health()).toEqual({ status: 'up' });

    proxy.cut(3_000);
    const seen = new Set<string>();
    const deadline = performance.now() + 10_000;
    while (subscription.health().status === 'up' && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(subscription.health()).toMatchObject({
      status: 'degraded',
      reason: expect.stringContaining('receives failing'),
    });
    // Back once the proxy lets connections through: a message sent meanwhile is delivered.
    const publisher = connect();
    await publisher.publish(name, { requestId: 'after-the-cut', body: 'x' });
    while (spy.count('delivered', 'after-the-cut') === 0 && performance.now() < deadline + 10_000) {
      seen.add(subscription.health().status);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(seen).not.toContain('down');
    await spy.waitFor('after-the-cut', 'delivered');
    expect(subscription.health()).toEqual({ status: 'up' });
    await subscription.stop();
    expect(subscription.health()).toEqual({ status: 'down', reason: 'stopped' });
  });
});

describe('settlement', () => {
  it('acks share DeleteMessageBatch calls (≤ 10 entries each)', async () => {
    const name = uniqueQueueName('batch');
    const url = await queues.create(name);
    const transport = connect({ ackBatchWindowMs: 50 });
    for (let i = 0; i < 25; i++)
      await transport.publish(name, { requestId: `m-${i}`, body: `${i}` });
    const send = vi.spyOn(transport.client, 'send');
    const { spy } = await subscribe(transport, name, undefined, 30);
    const delivered = await spy.waitForCount('delivered', 25);
    const acks = await Promise.all(delivered.map((r) => r.data.delivery.ack()));
    expect(acks.every(Boolean)).toBe(true);
    const deletes = send.mock.calls.filter(
      ([command]) => command.constructor.name === 'DeleteMessageBatchCommand',
    );
    expect(deletes.length).toBeGreaterThanOrEqual(3);
    expect(deletes.length).toBeLessThanOrEqual(5);
    expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('under load, a receive asks for a full batch of 10 rather than one per settled delivery', async () => {
    const name = uniqueQueueName('receives');
    const url = await queues.create(name);
    const transport = connect({ ackBatchWindowMs: 0 });
    const total = 200;
    for (let i = 0; i < total; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          transport.publish(name, { requestId: `m-${i + j}`, body: `${i + j}` }),
        ),
      );
    }
    const send = vi.spyOn(transport.client, 'send');
    // Settled one by one as they come, so slots free up one at a time.
    const { spy } = await subscribe(transport, name, (delivery) => void delivery.ack(), 30);
    await spy.waitForCount('acked', total);
    const asked = send.mock.calls
      .map(([command]) => command.input as { MaxNumberOfMessages?: number })
      .filter((_input, i) => send.mock.calls[i]?.[0].constructor.name === 'ReceiveMessageCommand')
      .map((input) => input.MaxNumberOfMessages ?? 1);
    const received = asked.reduce((sum, n) => sum + n, 0);
    // 200 messages in receives of 10, plus what the three polls ask for once the queue is empty.
    expect(
      asked.filter((n) => n < 10).length,
      `receives asked for ${asked.join(',')}`,
    ).toBeLessThanOrEqual(3);
    expect(received).toBeGreaterThanOrEqual(total);
    expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('retry past 12 h from the receive throws DelayTooLongError and leaves the delivery unsettled', async () => {
    const name = uniqueQueueName('delay');
    await queues.create(name);
    const transport = connect();
    const { spy } = await subscribe(transport, name);
    await transport.publish(name, { requestId: 'late', body: 'x' });
    const { delivery } = (await spy.waitFor('late', 'delivered')).data;
    await expect(delivery.retry({ delayMs: MAX_VISIBILITY_MS + 1_000 })).rejects.toBeInstanceOf(
      DelayTooLongError,
    );
    expect(delivery.settled).toBe(false);
    expect(await delivery.retry({ delayMs: 0 })).toBe(true);
    await spy.waitFor('late', 'delivered', { count: 2 });
  });

  it('a receipt handle SQS no longer honours: extendLease and ack resolve false', async () => {
    const name = uniqueQueueName('stale');
    const url = await queues.create(name, { visibilityTimeoutMs: 30_000 });
    const transport = connect();
    // maxInFlight 1: while the delivery is held this subscription does not poll again.
    const { spy } = await subscribe(transport, name, undefined, 1);
    await transport.publish(name, { requestId: 'taken', body: 'x' });
    const { delivery, message } = (await spy.waitFor('taken', 'delivered')).data;
    // Someone makes it visible and another consumer receives it: our handle is stale now.
    const handle = (message.raw as Message).ReceiptHandle;
    await admin.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: handle,
        VisibilityTimeout: 0,
      }),
    );
    expect(await receiveRaw(url)).toHaveLength(1);
    expect(await delivery.extendLease(30_000)).toBe(false);
    expect(await delivery.ack()).toBe(false);
  });

  it('reject goes to the RedrivePolicy target when the queue has one', async () => {
    const name = uniqueQueueName('redrive-target');
    const dlq = uniqueQueueName('elsewhere');
    await queues.create(name, { deadLetter: { name: dlq, maxReceiveCount: 10 } });
    const transport = connect({ redrive: true });
    const { spy } = await subscribe(transport, name, (d) => void d.reject({ reason: 'no' }));
    await transport.publish(name, { requestId: 'rejected', body: 'x' });
    await spy.waitFor('rejected', 'rejected');
    const dead = await receiveRaw((await queues.urlOf(dlq)) ?? '');
    expect(
      dead.map((m) => m.MessageAttributes?.[MessageAttributeNames.requestId]?.StringValue),
    ).toEqual(['rejected']);
  });

  it('native redrive: SQS moves a message received more than maxReceiveCount times', async () => {
    const name = uniqueQueueName('native');
    await queues.create(name, { deadLetter: { maxReceiveCount: 2 } });
    const transport = connect({ redrive: true });
    const { spy } = await subscribe(transport, name, (d) => void d.release());
    await transport.publish(name, { requestId: 'crash-loop', body: 'x' });
    await spy.waitFor('crash-loop', 'released', { count: 2 });
    // The third receive moves it; a long poll on the DLQ is not woken by a move, so poll.
    const dlq = (await queues.urlOf(`${name}-dlq`)) ?? '';
    let dead: Message[] = [];
    for (let tries = 0; dead.length === 0 && tries < 50; tries++) {
      dead = await receiveRaw(dlq, 0);
      if (dead.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      dead.map((m) => m.MessageAttributes?.[MessageAttributeNames.requestId]?.StringValue),
    ).toEqual(['crash-loop']);
    expect(spy.count('delivered', 'crash-loop')).toBe(2);
  });
});

describe('FIFO groups', () => {
  it('a retried message holds back the rest of its group, even those received in the same batch', async () => {
    const name = uniqueQueueName('fifo-order', true);
    await queues.create(name, { visibilityTimeoutMs: 5_000 });
    const transport = connect({ fifo: true });
    for (let i = 1; i <= 5; i++) {
      await transport.publish(name, { requestId: `g-${i}`, body: `${i}`, key: 'account-7' });
    }
    const acked: string[] = [];
    const { spy } = await subscribe(transport, name, async (d) => {
      const id = String(d.message.requestId);
      if (id === 'g-2' && spy.count('delivered', id) === 1) {
        await d.retry({ delayMs: 1_000 });
        return;
      }
      acked.push(id);
      await d.ack();
    });
    await spy.waitForCount('acked', 5);
    expect(acked).toEqual(['g-1', 'g-2', 'g-3', 'g-4', 'g-5']);
    const firstOfThree = spy.all('delivered', 'g-3')[0];
    const secondOfTwo = spy.all('delivered', 'g-2')[1];
    expect(firstOfThree?.seq).toBeGreaterThan(secondOfTwo?.seq ?? Number.POSITIVE_INFINITY);
  });

  it('a message redelivered after its visibility lapsed is handed out, not held behind its stale copy', async () => {
    const name = uniqueQueueName('fifo-lapse', true);
    await queues.create(name, { visibilityTimeoutMs: 1_000 });
    const transport = connect({ fifo: true, waitTimeMs: 0 });
    // Nobody settles or extends: the first copy lapses and SQS hands the group out again.
    const { spy } = await subscribe(transport, name, undefined, 3);
    await transport.publish(name, { requestId: 'slow', body: 'x', key: 'k' });
    await transport.publish(name, { requestId: 'next', body: 'y', key: 'k' });
    const again = await spy.waitFor('slow', 'delivered', { count: 2 });
    expect(again.data.message.attempt).toBeGreaterThanOrEqual(2);
    expect(await spy.all('delivered', 'slow')[0]?.data.delivery.ack()).toBe(false);
    expect(await again.data.delivery.ack()).toBe(true);
    const next = await spy.waitFor('next', 'delivered');
    expect(next.seq).toBeGreaterThan(again.seq);
  });
});

describe('shutdown with long polls', () => {
  it('stop() returns at once; what the in-flight poll brings goes straight back; close() waits for it', async () => {
    const name = uniqueQueueName('long-poll');
    const url = await queues.create(name, { visibilityTimeoutMs: 30_000 });
    const transport = connect({ waitTimeMs: 3_000 });
    const { spy, subscription } = await subscribe(transport, name);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the first long poll is out
    const stopStarted = performance.now();
    await subscription.stop();
    expect(performance.now() - stopStarted).toBeLessThan(200);

    await transport.publish(name, { requestId: 'during-stop', body: 'x' });
    const closeStarted = performance.now();
    await subscription.close();
    // The poll answered with the message as soon as it came: close() waited for that, no more.
    expect(performance.now() - closeStarted).toBeLessThan(2_000);
    expect(spy.count('delivered')).toBe(0);
    // Given back, not hidden for the 30 s visibility: visible again right away.
    const [again] = await receiveRaw(url, 0);
    expect(again?.MessageAttributes?.[MessageAttributeNames.requestId]?.StringValue).toBe(
      'during-stop',
    );
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
  });

  it('a subscription with an idle long poll closes within the poll time', async () => {
    const name = uniqueQueueName('idle');
    await queues.create(name);
    const transport = connect({ waitTimeMs: 2_000 });
    const { subscription } = await subscribe(transport, name);
    const started = performance.now();
    await subscription.close();
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('the connection close() is a crash: it aborts polls at once and leaves unsettled messages to their visibility timeout', async () => {
    const name = uniqueQueueName('crash');
    const url = await queues.create(name, { visibilityTimeoutMs: 1_000 });
    const own = new SQSClient(clientConfig);
    const transport = sqs({ client: own, waitTimeMs: 20_000 });
    const { spy } = await subscribe(transport, name);
    await transport.publish(name, { requestId: 'unsettled', body: 'x' });
    const { delivery } = (await spy.waitFor('unsettled', 'delivered')).data;
    const started = performance.now();
    await transport.close();
    expect(performance.now() - started).toBeLessThan(500);
    expect(await delivery.ack()).toBe(false);
    // A client the caller owns is not destroyed.
    await expect(queueDepth(own, url)).resolves.toMatchObject({ inFlight: 1 });
    own.destroy();
    // Back after its visibility timeout. (The aborted long poll may still be served by the
    // server and take it once more, unseen, for another timeout: the crash semantics, and the
    // reason a graceful stop never aborts a poll.)
    const [back] = await receiveRaw(url, 5);
    expect(Number(back?.Attributes?.ApproximateReceiveCount)).toBeGreaterThanOrEqual(2);
  });
});

describe('declareQueue', () => {
  it('is idempotent and wires the redrive policy', async () => {
    const name = uniqueQueueName('declare');
    const first = await queues.create(name, { deadLetter: { maxReceiveCount: 3 } });
    const again = await declareQueue(admin, name, { deadLetter: { maxReceiveCount: 3 } });
    expect(again.url).toBe(first);
    expect(again.deadLetterUrl).toMatch(/-dlq$/);
  });
});
