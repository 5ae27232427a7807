import {
  type Capabilities,
  type Logger,
  type OutgoingMessage,
  type PublishReceipt,
  type SubscribeRequest,
  type Subscription,
  silentLogger,
  type Transport,
  TransportClosedError,
} from '@idemq/core';
import { checkSubscribeRequest, OptionsCheck } from '@idemq/core/adapter';
import type { Kafka } from 'kafkajs';
import type { AdminClient, KafkaClient, ProducerClient } from './client.js';
import { assertRecordFits, unreachableError } from './errors.js';
import { KafkaHeaders } from './headers.js';
import { createKafkajs, kafkajsClient } from './kafkajsClient.js';
import { publishedRecord } from './publisher.js';
import { type RetryMode, retryTopicOf } from './retry.js';
import { KafkaSubscription } from './subscription.js';

export interface KafkaTransportOptions {
  /** Bootstrap brokers (`host:port`). Give exactly one of `brokers`, `kafka` or `client`. */
  brokers?: string[];
  /**
   * A kafkajs `Kafka` you configured (TLS, SASL, logging); the transport never closes it. Give
   * it `socketFactory: wholeResponseSockets()` (wrapping your own factory, if any): without it,
   * a connection lost mid-response can stall the client for its 30 s request timeout or crash
   * the process (see `wholeResponseSockets`).
   */
  kafka?: Kafka;
  /** Any implementation of the transport's client interface (another KafkaJS-compatible client). */
  client?: KafkaClient;
  /** @default 'idemq' */
  clientId?: string;
  /**
   * The Kafka consumer group id of a subscription. An idemq group is per source, a Kafka group
   * spans topics: members of one Kafka group must subscribe to the same topics (kafkajs assigns
   * every member partitions of the leader's topics), so the default keeps each source in its
   * own Kafka group. Pass `() => 'billing'` to reuse an existing group of a one-topic consumer.
   * @default (group, source) => `${group}.${source}`
   */
  groupId?: (group: string, source: string) => string;
  /**
   * Most messages of one partition handed out at once. `1` keeps Kafka's per-partition order for
   * processing, and an in-place retry blocks the partition (`nackBlocksKey: true`). Above 1,
   * messages of a partition are handed out in offset order but processed concurrently; acks may
   * arrive out of order (the commit is the contiguous done prefix) and a retried message steps
   * aside instead of blocking (`nackBlocksKey: false`).
   * @default 1
   */
  partitionConcurrency?: number;
  /**
   * `'in-place'`: a retried message waits in the consumer's buffer and is redelivered after the
   * delay. `'topic'`: it is produced to `<source><retryTopicSuffix>` with a not-before time and
   * committed on the source; the subscription consumes the retry topic too. See `RetryMode`.
   * @default 'in-place'
   */
  retryMode?: RetryMode;
  /** @default '.retry' */
  retryTopicSuffix?: string;
  /**
   * In `topic` retry mode, create a missing retry topic on subscribe, with the source's
   * partition count.
   * @default true
   */
  createRetryTopics?: boolean;
  /**
   * Dead letters of `<source>` go to `<source><deadLetterSuffix>`.
   * @default '.dlq'
   */
  deadLetterSuffix?: string;
  /** @default 'x-idemq-request-id' */
  requestIdHeader?: string;
  /**
   * Where a group with no committed offset starts. `'earliest'` gives a new group every message
   * still in the topic (`replayForNewGroup: true`); `'latest'` only what arrives after it first
   * fetched.
   * @default 'earliest'
   */
  startFrom?: 'earliest' | 'latest';
  /** kafkajs `sessionTimeout`. @default 30000 */
  sessionTimeoutMs?: number;
  /** kafkajs `heartbeatInterval`; below a third of the session timeout. @default 3000 */
  heartbeatIntervalMs?: number;
  /** kafkajs `rebalanceTimeout`. @default 60000 */
  rebalanceTimeoutMs?: number;
  /**
   * Longest a fetch waits for data. Also bounds how late a rebalance or a resumed partition is
   * noticed. @default 1000
   */
  maxWaitTimeMs?: number;
  /** Messages buffered per partition before its fetching pauses. @default 1000 */
  maxBufferedPerPartition?: number;
  /**
   * Least time between two offset commits of a subscription. Commits still go out at once when
   * a rebalance is announced and on stop. A larger value spares the broker (each commit is a
   * write to `__consumer_offsets`) at the cost of more redelivered messages after a crash,
   * which the store answers as duplicates. 0: commit as soon as the previous commit answered.
   * @default 100
   */
  commitIntervalMs?: number;
  /**
   * Largest record `publish` sends, counted as the broker counts `message.max.bytes` (and a
   * topic's `max.message.bytes`): the record batch that carries it alone, with its key, headers
   * and framing. Set it to the topic's limit to refuse exactly what the broker would.
   * @default 1000000
   */
  maxPayloadBytes?: number;
  /** Transport warnings and, when given, kafkajs logs (otherwise silenced). */
  logger?: Logger;
}

/** Defaults of `kafka()`. */
export const KAFKA_TRANSPORT_DEFAULTS = Object.freeze({
  clientId: 'idemq',
  groupId: (group: string, source: string): string => `${group}.${source}`,
  partitionConcurrency: 1,
  retryMode: 'in-place' as RetryMode,
  retryTopicSuffix: '.retry',
  createRetryTopics: true,
  deadLetterSuffix: '.dlq',
  requestIdHeader: KafkaHeaders.requestId,
  startFrom: 'earliest' as 'earliest' | 'latest',
  sessionTimeoutMs: 30_000,
  heartbeatIntervalMs: 3_000,
  rebalanceTimeoutMs: 60_000,
  maxWaitTimeMs: 1_000,
  maxBufferedPerPartition: 1_000,
  commitIntervalMs: 100,
  maxPayloadBytes: 1_000_000,
});

type Settings = Required<Omit<KafkaTransportOptions, 'brokers' | 'kafka' | 'client' | 'logger'>>;

/** The Kafka transport, with broker-side views the in-memory transport's `stats` also gives. */
export interface KafkaTransport extends Transport {
  /**
   * Messages of `topic` that idemq group `group` has not committed yet (ready, in flight or
   * waiting out an in-place retry), summed over partitions. In `topic` retry mode the retry
   * topic's count is `delayed`.
   */
  backlog(topic: string, group: string): Promise<{ pending: number; delayed: number }>;
}

/**
 * Kafka as an idemq transport (kafkajs). Kafka acks by offset, so an ack commits the contiguous
 * prefix of settled messages per partition; `retry` waits in place (blocking the partition when
 * it is consumed in order) or goes through a retry topic; `reject` produces a dead letter to
 * `<source>.dlq` (acks: -1) and only then commits; attempts are the idempotency record's.
 *
 * @example
 * import { createConsumer } from '@idemq/core';
 * import { kafka } from '@idemq/kafka';
 * import { redisStore } from '@idemq/redis';
 *
 * const transport = kafka({ brokers: ['127.0.0.1:9092'] });
 * const consumer = createConsumer({
 *   transport,
 *   store: redisStore({ url: 'redis://127.0.0.1:6379' }),
 *   source: 'payments',
 *   scope: 'billing',
 *   handler: async (message, ctx) => charge(message.value, { signal: ctx.signal }),
 * });
 * await consumer.start();
 * await transport.publish('payments', { key: 'customer-7', body: { amount: 10 } });
 */
export function kafka(options: KafkaTransportOptions): KafkaTransport {
  checkOptions(options);
  const settings: Settings = { ...KAFKA_TRANSPORT_DEFAULTS, ...definedOnly(options) };
  const logger = options.logger ?? silentLogger;
  const client =
    options.client ??
    kafkajsClient(
      options.kafka ??
        createKafkajs({
          brokers: options.brokers ?? [],
          clientId: settings.clientId,
          ...(options.logger ? { logger: options.logger } : {}),
        }),
    );
  const capabilities = kafkaCapabilities(settings);
  const subscriptions = new Set<KafkaSubscription>();
  const retryTopics = new Map<string, Promise<void>>();
  let producer: ProducerClient | undefined;
  let admin: AdminClient | undefined;
  let closing: Promise<void> | undefined;

  const getProducer = () => {
    producer ??= client.producer();
    return producer;
  };
  const getAdmin = () => {
    admin ??= client.admin();
    return admin;
  };
  const assertOpen = () => {
    if (closing) throw new TransportClosedError('kafka');
  };

  /** Creates `<source>.retry` once per source when it is missing. */
  const ensureRetryTopic = (source: string, retryTopic: string): Promise<void> => {
    let ensuring = retryTopics.get(retryTopic);
    if (!ensuring) {
      ensuring = (async () => {
        const adminClient = getAdmin();
        if ((await adminClient.partitionCount(retryTopic)) !== undefined) return;
        const partitions = (await adminClient.partitionCount(source)) ?? 1;
        await adminClient.createTopic(retryTopic, partitions);
      })();
      ensuring.catch(() => retryTopics.delete(retryTopic));
      retryTopics.set(retryTopic, ensuring);
    }
    return ensuring;
  };

  const lag = async (topic: string, group: string): Promise<number> => {
    const adminClient = getAdmin();
    const [watermarks, committed] = await Promise.all([
      adminClient.watermarks(topic),
      adminClient.committedOffsets(group, topic),
    ]);
    let total = 0n;
    for (const [partition, { low, high }] of watermarks) {
      const position = committed.get(partition) ?? -1n;
      const from = position < low ? low : position;
      if (high > from) total += high - from;
    }
    return Number(total);
  };

  return {
    name: 'kafka',
    capabilities,

    async publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt> {
      assertOpen();
      const { record, requestId } = publishedRecord(message, settings.requestIdHeader);
      assertRecordFits(destination, record, settings.maxPayloadBytes, requestId);
      try {
        await getProducer().send(destination, [record]);
      } catch (error) {
        throw unreachableError(error, options.brokers);
      }
      return { requestId };
    },

    async subscribe(request: SubscribeRequest): Promise<Subscription> {
      assertOpen();
      checkSubscribeRequest(request);
      const { source } = request;
      const group = request.group ?? 'default';
      const retryTopic =
        settings.retryMode === 'topic'
          ? retryTopicOf(source, settings.retryTopicSuffix)
          : undefined;
      if (retryTopic && settings.createRetryTopics) {
        await ensureRetryTopic(source, retryTopic).catch((error: unknown) => {
          throw unreachableError(error, options.brokers);
        });
      }
      const subscription = new KafkaSubscription(
        request,
        {
          source,
          retryTopic,
          deadLetterTopic: source + settings.deadLetterSuffix,
          retryMode: settings.retryMode,
          fromBeginning: settings.startFrom === 'earliest',
          partitionConcurrency: settings.partitionConcurrency,
          maxBufferedPerPartition: settings.maxBufferedPerPartition,
          commitIntervalMs: settings.commitIntervalMs,
          requestIdHeader: settings.requestIdHeader,
          consumer: {
            groupId: settings.groupId(group, source),
            sessionTimeoutMs: settings.sessionTimeoutMs,
            heartbeatIntervalMs: settings.heartbeatIntervalMs,
            rebalanceTimeoutMs: settings.rebalanceTimeoutMs,
            maxWaitTimeMs: settings.maxWaitTimeMs,
          },
        },
        {
          client,
          producer: getProducer,
          logger,
          onClosed: (closed) => subscriptions.delete(closed),
        },
      );
      subscriptions.add(subscription);
      try {
        await subscription.open();
      } catch (error) {
        subscriptions.delete(subscription);
        throw unreachableError(error, options.brokers);
      }
      return subscription;
    },

    async backlog(topic: string, group: string) {
      const groupId = settings.groupId(group, topic);
      const [pending, delayed] = await Promise.all([
        lag(topic, groupId),
        settings.retryMode === 'topic'
          ? lag(retryTopicOf(topic, settings.retryTopicSuffix), groupId)
          : Promise.resolve(0),
      ]);
      return { pending, delayed };
    },

    close() {
      closing ??= (async () => {
        // As when a process dies: what was not settled is delivered again to the group.
        await Promise.allSettled([...subscriptions].map((subscription) => subscription.close()));
        await Promise.allSettled([producer?.close(), admin?.close()]);
      })();
      return closing;
    },
  };
}

/** What the Kafka transport declares, for the options it was given. */
export function kafkaCapabilities(
  settings: Pick<Settings, 'partitionConcurrency' | 'retryMode' | 'startFrom' | 'maxPayloadBytes'>,
): Capabilities {
  return Object.freeze({
    // Kafka counts nothing: attempts come from the idempotency record.
    redeliveryCounter: 'none',
    nativeDelay: 'emulated',
    deadLetter: 'emulated',
    orderingScope: 'partition',
    nackBlocksKey: settings.retryMode === 'in-place' && settings.partitionConcurrency === 1,
    // Deliveries are held as long as the member keeps its partitions; the fetch loop keeps the
    // session alive however long a handler runs. There is no per-message lease to extend.
    leaseExtension: false,
    batchAck: 'contiguous-prefix',
    maxHeaders: null,
    maxPayloadBytes: settings.maxPayloadBytes,
    replayForNewGroup: settings.startFrom === 'earliest',
    releaseCountsAttempt: false,
    // Each consumer group reads the whole topic; no broker-side dedup of publishes.
    consumerGroups: true,
    publishDedup: false,
  });
}

function checkOptions(options: KafkaTransportOptions): void {
  const check = new OptionsCheck('kafka');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  const given = [options.brokers, options.kafka, options.client].filter((v) => v !== undefined);
  const badBrokers = Array.isArray(options.brokers)
    ? options.brokers.filter((broker) => !isHostPort(broker))
    : [];
  check
    .expect(given.length === 1, 'give exactly one of brokers, kafka or client')
    .expect(
      options.brokers === undefined ||
        (Array.isArray(options.brokers) && options.brokers.length > 0),
      'brokers must be a non-empty array of host:port strings',
    )
    .expect(
      badBrokers.length === 0,
      `brokers must be host:port strings (no scheme), got ${badBrokers.map((b) => JSON.stringify(b)).join(', ')}`,
    )
    .text('clientId', options.clientId, true)
    .fn('groupId', options.groupId, true)
    .integer('partitionConcurrency', options.partitionConcurrency, 1, 100_000)
    .oneOf('retryMode', options.retryMode, ['in-place', 'topic'])
    .text('retryTopicSuffix', options.retryTopicSuffix, true)
    .text('deadLetterSuffix', options.deadLetterSuffix, true)
    .text('requestIdHeader', options.requestIdHeader, true)
    .oneOf('startFrom', options.startFrom, ['earliest', 'latest'])
    .integer('sessionTimeoutMs', options.sessionTimeoutMs, 1)
    .integer('heartbeatIntervalMs', options.heartbeatIntervalMs, 1)
    .integer('rebalanceTimeoutMs', options.rebalanceTimeoutMs, 1)
    .integer('maxWaitTimeMs', options.maxWaitTimeMs, 1)
    .integer('maxBufferedPerPartition', options.maxBufferedPerPartition, 1)
    .integer('commitIntervalMs', options.commitIntervalMs, 0, 60_000)
    .integer('maxPayloadBytes', options.maxPayloadBytes, 1)
    .expect(
      (options.heartbeatIntervalMs ?? KAFKA_TRANSPORT_DEFAULTS.heartbeatIntervalMs) <
        (options.sessionTimeoutMs ?? KAFKA_TRANSPORT_DEFAULTS.sessionTimeoutMs),
      'heartbeatIntervalMs must be below sessionTimeoutMs',
    )
    .expect(
      options.retryTopicSuffix === undefined ||
        options.retryTopicSuffix !== (options.deadLetterSuffix ?? '.dlq'),
      'retryTopicSuffix and deadLetterSuffix must differ',
    )
    .done();
}

/** `host:port` or `[ipv6]:port`, as kafkajs expects a bootstrap broker. */
function isHostPort(broker: unknown): boolean {
  if (typeof broker !== 'string') return false;
  const match = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s:/[\]@]+):(\d{1,5})$/.exec(broker);
  return match !== null && Number(match[1]) >= 1 && Number(match[1]) <= 65_535;
}

function definedOnly<O extends object>(value: O): Partial<O> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<O>;
}
