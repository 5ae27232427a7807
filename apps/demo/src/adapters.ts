/**
 * The registry of transports and stores the demo can run on: transports `memory`, `rabbitmq`,
 * `kafka` and `sqs`, stores `memory`, `redis` and `postgres`. A new adapter is one entry here.
 */
import {
  type MemoryTransport,
  memoryBroker,
  memoryStore,
  memoryTransport,
  type Store,
  type Transport,
} from '@idemq/core';
import { type KafkaTransport, kafka } from '@idemq/kafka';
import {
  defaultQueueName,
  RABBITMQ_DEFAULTS,
  type RabbitmqTransport,
  rabbitmq,
} from '@idemq/rabbitmq';
import { redisStore } from '@idemq/redis';
import { declareQueue, deleteQueue, type SqsTransport, sqs } from '@idemq/sqs';
import amqplib from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { type DatabaseLedger, postgresStoreKit } from './postgres/postgresKit.js';

/** One broker as the scenario uses it: connections, a backlog probe, teardown. */
export interface TransportKit {
  readonly name: string;
  /** Opens a new connection: one per consumer and one for the publisher. */
  connect(): Transport;
  /**
   * Messages on `destination` not settled yet (ready + in flight + delayed) for `group`, or
   * `undefined` when the broker cannot tell cheaply; the scenario then relies on events alone.
   */
  backlog(destination: string, group: string): Promise<number | undefined>;
  /** Closes what `connect` opened and the broker itself. */
  close(): Promise<void>;
}

/** One idempotency store as the scenario uses it. */
export interface StoreKit {
  readonly name: string;
  /** The store shared by all consumers (they share records, as processes sharing Redis would). */
  readonly store: Store;
  /** Proves the store answers before the run starts, when it can. */
  ready?(): Promise<void>;
  /**
   * With a transactional store: the ledger kept in the same database, which the handler charges
   * into through `ctx.transaction`. Absent: the scenario keeps the ledger in memory.
   */
  readonly ledger?: DatabaseLedger;
  close(): Promise<void>;
}

/** Options every transport kit understands. */
export interface TransportKitOptions {
  /** Suffix of the dead-letter destination: `payments` → `payments.dlq`. */
  deadLetterSuffix: string;
}

type TransportFactory = (options: TransportKitOptions) => TransportKit;
/** Options a store kit may use to size itself. */
export interface StoreKitOptions {
  /** Handlers that may run at once across all consumers. */
  concurrentRuns?: number;
}

type StoreFactory = (options?: StoreKitOptions) => StoreKit;

const transportFactories: Readonly<Record<string, TransportFactory>> = {
  memory: memoryTransportKit,
  rabbitmq: rabbitmqTransportKit,
  kafka: kafkaTransportKit,
  sqs: sqsTransportKit,
};

const storeFactories: Readonly<Record<string, StoreFactory>> = {
  memory: () => {
    const store = memoryStore();
    return { name: 'memory', store, close: () => store.close() };
  },
  redis: () => {
    // A fresh key prefix per run: ids of an earlier run must not count as duplicates.
    const store = redisStore({
      url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: `idemq-demo-${Date.now().toString(36)}`,
    });
    return {
      name: 'redis',
      store,
      ready: async () => {
        await store.ready();
      },
      close: () => store.close(),
    };
  },
  postgres: postgresStoreKit,
};

/** Names that later versions of the demo will accept. */
const PLANNED_TRANSPORTS: string[] = [];
const PLANNED_STORES: string[] = [];

/** A `--transport` / `--store` value the demo cannot run with; the CLI exits 2 with its message. */
export class UnsupportedAdapterError extends Error {
  constructor(kind: 'transport' | 'store', name: string, available: readonly string[]) {
    const planned = kind === 'transport' ? PLANNED_TRANSPORTS : PLANNED_STORES;
    super(
      planned.includes(name)
        ? `--${kind} ${name} is available in a later version; this one runs on: ${available.join(', ')}`
        : `unknown --${kind} '${name}'; choose one of: ${available.join(', ')}`,
    );
    this.name = 'UnsupportedAdapterError';
  }
}

/** Transport names this build accepts. */
export const transportNames: readonly string[] = Object.keys(transportFactories);
/** Store names this build accepts. */
export const storeNames: readonly string[] = Object.keys(storeFactories);

/** The transport factory for `name`; throws `UnsupportedAdapterError` for anything else. */
export function resolveTransport(name: string): TransportFactory {
  const factory = Object.hasOwn(transportFactories, name) ? transportFactories[name] : undefined;
  if (!factory) throw new UnsupportedAdapterError('transport', name, transportNames);
  return factory;
}

/** The store factory for `name`; throws `UnsupportedAdapterError` for anything else. */
export function resolveStore(name: string): StoreFactory {
  const factory = Object.hasOwn(storeFactories, name) ? storeFactories[name] : undefined;
  if (!factory) throw new UnsupportedAdapterError('store', name, storeNames);
  return factory;
}

function memoryTransportKit(options: TransportKitOptions): TransportKit {
  const broker = memoryBroker();
  const connections: MemoryTransport[] = [];
  const open = () => {
    const transport = memoryTransport({ broker, deadLetterSuffix: options.deadLetterSuffix });
    connections.push(transport);
    return transport;
  };
  // A connection of its own for probing, so stats never depend on a consumer's lifetime.
  const probe = open();
  return {
    name: 'memory',
    connect: open,
    async backlog(destination, group) {
      const stats = probe.stats(destination, group);
      return stats.ready + stats.inFlight + stats.delayed;
    },
    async close() {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}

function rabbitmqTransportKit(options: TransportKitOptions): TransportKit {
  const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  // One namespace per run: what an interrupted run left behind never reaches the next one.
  const run = `idemq-demo-${Date.now().toString(36)}`;
  const queues = new Set<string>();
  const exchanges = new Set<string>();
  const connections: RabbitmqTransport[] = [];
  const connect = () => {
    const transport = rabbitmq({
      url,
      deadLetterSuffix: options.deadLetterSuffix,
      exchangeName: (destination) => {
        exchanges.add(`${run}.${destination}`);
        return `${run}.${destination}`;
      },
      // Every reader of a dead-letter destination shares its one queue, as an operator's DLQ.
      queueName: (source, group) => {
        const deadLetters = source.endsWith(options.deadLetterSuffix);
        const name = `${run}.${deadLetters ? source : defaultQueueName(source, group)}`;
        queues.add(name);
        return name;
      },
    });
    connections.push(transport);
    return transport;
  };
  return {
    name: 'rabbitmq',
    connect,
    // Without the management plugin AMQP tells only what is ready, not what is in flight or
    // waiting in a retry tier: the scenario relies on its events.
    backlog: async () => undefined,
    async close() {
      await Promise.all(connections.map((transport) => transport.close()));
      // Leave nothing of the run on the broker: queues, their retry tiers, exchanges.
      const model = await amqplib.connect(url);
      try {
        const channel = await model.createChannel();
        for (const queue of queues) {
          await channel.deleteQueue(queue);
          for (const tierMs of RABBITMQ_DEFAULTS.retryTiersMs) {
            await channel.deleteQueue(`${queue}.retry.${tierMs}`);
          }
        }
        for (const exchange of exchanges) await channel.deleteExchange(exchange);
      } finally {
        await model.close();
      }
    },
  };
}

/**
 * SQS (ElasticMQ at SQS_ENDPOINT, default http://127.0.0.1:9324) with fresh queues per run. SQS
 * names allow no dots: `payments` / `payments.dlq` become `idemq-demo-<run>-payments` /
 * `…-payments-dlq`. Dummy credentials, given explicitly: the SDK never looks for real ones.
 */
function sqsTransportKit(options: TransportKitOptions): TransportKit {
  const run = `idemq-demo-${Date.now().toString(36)}`;
  const queueOf = (source: string) =>
    `${run}-${source.replace(options.deadLetterSuffix, '-dlq').replaceAll('.', '-')}`;
  const settings = {
    clientConfig: {
      endpoint: process.env.SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
      region: process.env.AWS_REGION ?? 'us-east-1',
      credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' },
    },
    queueOf,
    redrive: true,
    waitTimeMs: 1_000,
  };
  const probe = sqs(settings);
  const connections: SqsTransport[] = [];
  // SQS itself dead-letters after 10 receives (retries and in-progress waits count as receives).
  const ready = declareQueue(probe.client, queueOf('payments'), {
    deadLetter: { name: queueOf(`payments${options.deadLetterSuffix}`), maxReceiveCount: 10 },
  });
  return {
    name: 'sqs',
    connect(): Transport {
      const transport = sqs(settings);
      connections.push(transport);
      return {
        ...transport,
        async subscribe(request) {
          await ready;
          return transport.subscribe(request);
        },
        async publish(destination, message) {
          await ready;
          return transport.publish(destination, message);
        },
      };
    },
    async backlog(destination) {
      await ready;
      const { ready: visible, inFlight, delayed } = await probe.depth(destination);
      return visible + inFlight + delayed;
    },
    async close() {
      await Promise.all(connections.map((transport) => transport.close()));
      const { url, deadLetterUrl } = await ready;
      for (const queue of [url, deadLetterUrl]) if (queue) await deleteQueue(probe.client, queue);
      await probe.close();
    },
  };
}

/**
 * Kafka (KAFKA_BROKERS, default 127.0.0.1:9092). Each run gets its own 6-partition topics
 * (`payments` → `idemq-demo-<run>-payments`), so no earlier run's records count. The demo
 * publishes without keys: a duplicate's copies meet on different partitions, and
 * `partitionConcurrency` lets the waiting copy step aside instead of holding its partition.
 */
function kafkaTransportKit(options: TransportKitOptions): TransportKit {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const run = Date.now().toString(36);
  const topic = (name: string) => `idemq-demo-${run}-${name}`;
  const admin = new Kafka({ clientId: 'idemq-demo', brokers, logLevel: logLevel.NOTHING }).admin();
  const adminReady = admin.connect();
  const created = new Map<string, Promise<unknown>>();
  const ensure = (...names: string[]) =>
    Promise.all(
      names.map((name) => {
        const topics = [{ topic: topic(name), numPartitions: 6 }];
        if (!created.has(name)) {
          created.set(
            name,
            adminReady.then(() => admin.createTopics({ topics, waitForLeaders: true })),
          );
        }
        return created.get(name);
      }),
    );
  const connections: KafkaTransport[] = [];
  const open = () => {
    const { deadLetterSuffix } = options;
    const transport = kafka({ brokers, deadLetterSuffix, partitionConcurrency: 8 });
    connections.push(transport);
    return transport;
  };
  const probe = open();
  return {
    name: 'kafka',
    connect(): Transport {
      const transport = open();
      return {
        ...transport,
        publish: async (destination, message) => {
          await ensure(destination);
          return transport.publish(topic(destination), message);
        },
        subscribe: async (request) => {
          await ensure(request.source, request.source + options.deadLetterSuffix);
          return transport.subscribe({ ...request, source: topic(request.source) });
        },
      };
    },
    async backlog(destination, group) {
      const { pending, delayed } = await probe.backlog(topic(destination), group);
      return pending + delayed;
    },
    async close() {
      await Promise.all(connections.map((connection) => connection.close()));
      await adminReady.then(
        () => admin.disconnect(),
        () => undefined,
      );
    },
  };
}
