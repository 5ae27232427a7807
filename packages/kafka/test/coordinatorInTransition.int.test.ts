import { connect as netConnect, type Socket } from 'node:net';
import { type Delivery, TransportUnavailableError } from '@idemq/core';
import { type ISocketFactory, Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { type KafkaTransport, wholeResponseSockets } from '../src/index.js';
import {
  brokers,
  closedAfterEach,
  createTopics,
  eventually,
  testTransport,
  topicName,
} from './helpers.js';

/** Kafka's JoinGroup API key, and the error code a coordinator removing the group answers with. */
const JOIN_GROUP = 11;
const COORDINATOR_NOT_AVAILABLE = 15;

const opened = closedAfterEach();

/**
 * Sockets to the real broker whose first `failures` JoinGroup answers carry
 * COORDINATOR_NOT_AVAILABLE, as Kafka answers while it removes a group that just became empty
 * (after its topic was deleted). Placed under `wholeResponseSockets`, it sees whole responses.
 */
function coordinatorInTransition(failures: number) {
  const injected = { count: 0 };
  const factory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = netConnect({ host, port }, onConnect);
    // JoinGroup correlation ids on this connection whose answer is to be failed.
    const joins = new Set<number>();
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      // kafkajs writes each request whole: size, api key, api version, correlation id, ….
      if (Buffer.isBuffer(chunk) && chunk.readInt16BE(4) === JOIN_GROUP) {
        // From version 2 on the answer starts with throttle time, then the error code.
        if (chunk.readInt16BE(6) < 2) throw new Error('JoinGroup below v2: cannot inject');
        if (injected.count + joins.size < failures) joins.add(chunk.readInt32BE(8));
      }
      return write(chunk, ...rest);
    }) as Socket['write'];
    const emit = socket.emit.bind(socket);
    socket.emit = (event: string | symbol, ...args: unknown[]): boolean => {
      if (event === 'data') failJoins(args[0] as Buffer, joins, injected);
      return emit(event, ...args);
    };
    return socket;
  };
  return { factory, injected };
}

/** Sets the error code of every JoinGroup answer in `responses` (whole frames) that is listed. */
function failJoins(responses: Buffer, joins: Set<number>, injected: { count: number }): void {
  for (let at = 0; at + 8 <= responses.length; at += 4 + responses.readInt32BE(at)) {
    const correlationId = responses.readInt32BE(at + 4);
    if (!joins.delete(correlationId)) continue;
    responses.writeInt16BE(COORDINATOR_NOT_AVAILABLE, at + 12);
    injected.count++;
  }
}

function transportWith(factory: ISocketFactory): KafkaTransport {
  const transport = testTransport({
    kafka: new Kafka({
      clientId: 'idemq-test',
      brokers,
      logLevel: logLevel.NOTHING,
      socketFactory: wholeResponseSockets(factory),
    }),
  });
  opened.push(transport);
  return transport;
}

describe('a group coordinator in transition when a subscription first joins', () => {
  it('subscribe joins again and resolves; the subscription consumes', async () => {
    const topic = topicName('coordinator');
    await createTopics([topic, `${topic}.dlq`], 1);
    const faults = coordinatorInTransition(2);
    const consumer = transportWith(faults.factory);
    const received: string[] = [];
    const subscription = await consumer.subscribe({
      source: topic,
      maxInFlight: 4,
      onDelivery: (delivery: Delivery) => {
        received.push(String(delivery.message.requestId));
        void delivery.ack();
      },
    });
    expect(faults.injected.count, 'JoinGroup answers failed').toBe(2);
    expect(subscription.health().status).toBe('up');

    const publisher = testTransport();
    opened.push(publisher);
    await publisher.publish(topic, { requestId: 'after-join', body: {} });
    await eventually(() => received.length > 0, 'the message published after the join', 15_000);
    expect(received).toEqual(['after-join']);
  });

  it('a coordinator that never settles fails subscribe after a bounded number of joins', async () => {
    const topic = topicName('coordinator-gone');
    await createTopics([topic, `${topic}.dlq`], 1);
    const faults = coordinatorInTransition(Number.POSITIVE_INFINITY);
    const consumer = transportWith(faults.factory);
    const started = Date.now();
    const failure = await consumer
      .subscribe({ source: topic, maxInFlight: 4, onDelivery: (delivery) => void delivery.ack() })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(TransportUnavailableError);
    expect((failure as Error).message).toMatch(/group coordinator is not available/);
    expect((failure as Error).cause).toMatchObject({ type: 'GROUP_COORDINATOR_NOT_AVAILABLE' });
    // The first join and its 5 restarts, 300 ms apart.
    expect(faults.injected.count).toBe(6);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('closing the transport while a first join waits to be retried ends subscribe', async () => {
    const topic = topicName('coordinator-closed');
    await createTopics([topic, `${topic}.dlq`], 1);
    const faults = coordinatorInTransition(Number.POSITIVE_INFINITY);
    const consumer = transportWith(faults.factory);
    const subscribing = consumer
      .subscribe({ source: topic, maxInFlight: 4, onDelivery: (delivery) => void delivery.ack() })
      .then(
        () => 'joined',
        () => 'failed',
      );
    await eventually(() => faults.injected.count > 0, 'the first failed join');
    const closing = Date.now();
    await consumer.close();
    expect(await subscribing).toBe('failed');
    expect(Date.now() - closing, 'ms to close').toBeLessThan(5_000);
    // No join after close: kafkajs's pending restart was cancelled.
    const joinsAtClose = faults.injected.count;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(faults.injected.count).toBe(joinsAtClose);
  });
});
