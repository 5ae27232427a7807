import {
  type Capabilities,
  type OutgoingMessage,
  type PublishReceipt,
  type SubscribeRequest,
  type Subscription,
  type Transport,
  TransportClosedError,
} from '@idemq/core';
import { checkSubscribeRequest, OptionsCheck } from '@idemq/core/adapter';
import amqplib from 'amqplib';
import { Connector } from './connection.js';
import { DEFAULT_GROUP, type QueueType, type RabbitmqOptions, resolveOptions } from './options.js';
import { MAX_MESSAGE_BYTES, Publisher } from './publisher.js';
import { RabbitmqSubscription } from './subscription.js';
import { type SubscriptionTopology, Topology } from './topology.js';

/**
 * What this transport can do on each queue type (see the README's table for why).
 * - Attempts: quorum queues count every return (`x-delivery-count`), so attempts are exact;
 *   classic queues only flag a redelivery, so their attempt number is an estimate.
 * - Delays are TTL tier queues (no plugin): emulated, never early, rounded up to a tier.
 * - Dead letters are published by the transport (with the reason headers): emulated.
 * - Release republishes the message unchanged: free on every queue type and version.
 */
export function rabbitmqCapabilities(queueType: QueueType): Capabilities {
  return Object.freeze({
    redeliveryCounter: queueType === 'quorum' ? 'exact' : 'none',
    nativeDelay: 'emulated',
    deadLetter: 'emulated',
    orderingScope: 'queue',
    nackBlocksKey: false,
    leaseExtension: false,
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: MAX_MESSAGE_BYTES,
    replayForNewGroup: false,
    releaseCountsAttempt: false,
    // Each group gets every message (a queue per group); no broker-side dedup of publishes.
    consumerGroups: true,
    publishDedup: false,
  });
}

/** The RabbitMQ `Transport`, with what RabbitMQ adds to the contract. */
export interface RabbitmqTransport extends Transport {
  readonly queueType: QueueType;
  /**
   * Declares the exchange of `source`, the queue of `group` bound to it, and the dead-letter
   * exchange and queue, without consuming: publishes to `source` are then kept for `group`
   * even before its first consumer starts (RabbitMQ drops nothing silently here — an
   * unroutable publish is refused as `PublishFailedError` 'unroutable').
   */
  declare(source: string, group?: string): Promise<SubscriptionTopology>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The RabbitMQ transport (amqplib). One connection per transport, opened on first use and
 * reopened with backoff after a loss; a confirm channel per subscription and one for
 * publishing. A destination is a fanout exchange; each consumer group reads its own durable
 * queue bound to it (the group `'default'` reads the queue named like the destination).
 *
 * @example
 * import { createConsumer } from '@idemq/core';
 * import { rabbitmq } from '@idemq/rabbitmq';
 *
 * const transport = rabbitmq({ url: 'amqp://guest:guest@127.0.0.1:5672' });
 * const consumer = createConsumer({
 *   transport,
 *   store,
 *   source: 'payments',
 *   scope: 'billing',
 *   handler: async (message) => charge(message.value),
 * });
 * await consumer.start();
 * await transport.publish('payments', { body: { amount: 10 } });
 */
export function rabbitmq(options: RabbitmqOptions): RabbitmqTransport {
  const settings = resolveOptions(options, (url, socketOptions) =>
    amqplib.connect(url, socketOptions),
  );
  const connector = new Connector(settings);
  const topology = new Topology(connector, settings);
  const publisher = new Publisher(connector, topology, settings);
  const subscriptions = new Set<RabbitmqSubscription>();
  let closing: Promise<void> | undefined;

  const assertOpen = () => {
    if (closing) throw new TransportClosedError('rabbitmq');
  };

  const transport: RabbitmqTransport = {
    name: 'rabbitmq',
    capabilities: rabbitmqCapabilities(settings.queueType),
    queueType: settings.queueType,

    async publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt> {
      assertOpen();
      new OptionsCheck('publish').text('destination', destination).done();
      return publisher.publish(destination, message);
    },

    async subscribe(request: SubscribeRequest): Promise<Subscription> {
      assertOpen();
      // AMQP prefetch is a 16-bit count.
      checkSubscribeRequest(request, { maxInFlight: 65_535 });
      const names = topology.names(request.source, request.group ?? DEFAULT_GROUP);
      // Declaring both would bind the group's queue to its own dead-letter exchange.
      new OptionsCheck('subscribe')
        .expect(
          !settings.declare || names.queue !== names.deadLetterQueue,
          `group "${request.group}" would read the dead-letter queue "${names.queue}": choose another group name`,
        )
        .done();
      const subscription = new RabbitmqSubscription(request, {
        connector,
        topology,
        settings,
        onEnded: (ended) => subscriptions.delete(ended),
      });
      subscriptions.add(subscription);
      await subscription.start();
      return subscription;
    },

    async declare(source: string, group?: string): Promise<SubscriptionTopology> {
      assertOpen();
      new OptionsCheck('declare').text('source', source).text('group', group, true).done();
      return topology.subscription(source, group ?? DEFAULT_GROUP);
    },

    close() {
      closing ??= (async () => {
        // Like a process dying: channels close, the broker requeues what was unsettled.
        await Promise.all([...subscriptions].map((s) => s.abandon()));
        await publisher.close();
        await topology.close();
        await connector.close();
      })();
      return closing;
    },

    [Symbol.asyncDispose]() {
      return transport.close();
    },
  };
  return transport;
}
