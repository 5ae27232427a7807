import { connect as netConnect } from 'node:net';
import type { Delivery } from '@idemq/core';
import { TcpProxy } from '@idemq/services';
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

const opened = closedAfterEach();

/** Every connection of the client goes through `proxy`, whatever broker address it asks for. */
function throughProxy(proxy: TcpProxy): ISocketFactory {
  return ({ onConnect }) => netConnect({ host: '127.0.0.1', port: proxy.port }, onConnect);
}

async function proxiedTransport(proxy: TcpProxy): Promise<KafkaTransport> {
  const transport = testTransport({
    kafka: new Kafka({
      clientId: 'idemq-test',
      brokers: [`127.0.0.1:${proxy.port}`],
      logLevel: logLevel.NOTHING,
      // What the kafka package README tells users who build their own Kafka to pass.
      socketFactory: wholeResponseSockets(throughProxy(proxy)),
    }),
  });
  opened.push(transport);
  return transport;
}

describe('a connection cut in the middle of a broker response', () => {
  it('the consumer goes on over a new connection, within seconds (kafkajs #715)', async () => {
    const [host, port] = (brokers[0] as string).split(':');
    const proxy = await TcpProxy.start(host as string, Number(port));
    opened.push(proxy);
    const topic = topicName('midcut');
    await createTopics([topic, `${topic}.dlq`], 1);
    const consumer = await proxiedTransport(proxy);
    const received = new Set<string>();
    const subscription = await consumer.subscribe({
      source: topic,
      maxInFlight: 16,
      onDelivery: (delivery: Delivery) => {
        received.add(String(delivery.message.requestId));
        void delivery.ack();
      },
    });
    const publisher = testTransport();
    opened.push(publisher);
    const publish = async (ids: string[]) => {
      for (const requestId of ids) await publisher.publish(topic, { requestId, body: requestId });
    };
    await publish(['before-1', 'before-2']);
    await eventually(() => received.size === 2, 'the messages before the cut', 15_000);

    // Three times: the consumer's next response from the broker (a fetch answer every 200 ms,
    // a heartbeat answer every 300 ms) arrives cut after its size and two more bytes, then the
    // connection closes; kafkajs reconnects that same connection object.
    for (const round of [1, 2, 3]) {
      await proxy.cutMidStream(6);
      const after = [`after-${round}-1`, `after-${round}-2`];
      await publish(after);
      // Well below kafkajs's 30 s request timeout, which a stale read buffer waits out.
      await eventually(
        () => after.every((id) => received.has(id)),
        `the messages after cut ${round}`,
        10_000,
      );
    }
    expect(proxy.cuts).toBe(3);
    expect(subscription.health().status).toBe('up');
    // Leaving the group goes over the connections that were cut, too.
    const closing = Date.now();
    await subscription.close();
    expect(Date.now() - closing, 'ms to leave the group').toBeLessThan(10_000);
  });
});
