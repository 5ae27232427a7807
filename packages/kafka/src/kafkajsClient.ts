import type { Logger } from '@idemq/core';
import {
  type Admin,
  type Consumer,
  type EachBatchPayload,
  Kafka,
  type KafkaMessage,
  type LogEntry,
  logLevel,
  Partitioners,
  type Producer,
} from 'kafkajs';
import type {
  AdminClient,
  ConsumerClient,
  ConsumerHandlers,
  ConsumerSettings,
  FetchedBatch,
  FetchedMessage,
  KafkaClient,
  OffsetCommit,
  ProducedRecord,
  ProducerClient,
} from './client.js';
import { wholeResponseSockets } from './wholeResponseSockets.js';

/** Batches of one fetch given to `eachBatch` at once (see `run`). */
const BATCHES_AT_ONCE = 128;

/** How long a topic the transport creates may take to get its partition leaders. */
const TOPIC_READY_TIMEOUT_MS = 30_000;

/** How to reach the cluster when the transport builds its own kafkajs client. */
export interface KafkajsConnection {
  brokers: string[];
  clientId: string;
  /** kafkajs logs go here; without one they are silenced. */
  logger?: Logger;
}

/**
 * Builds a kafkajs `Kafka` with idemq's defaults: kafkajs logs routed to the idemq logger (or
 * silenced), and sockets that hand kafkajs whole responses only (`wholeResponseSockets`).
 */
export function createKafkajs(connection: KafkajsConnection): Kafka {
  const { logger } = connection;
  return new Kafka({
    clientId: connection.clientId,
    brokers: connection.brokers,
    logLevel: logger ? logLevel.INFO : logLevel.NOTHING,
    socketFactory: wholeResponseSockets(),
    ...(logger ? { logCreator: () => (entry: LogEntry) => forward(logger, entry) } : {}),
  });
}

function forward(logger: Logger, { namespace, level, log }: LogEntry): void {
  const { message, timestamp: _timestamp, ...extra } = log;
  const fields = { kafkajs: namespace, ...extra };
  const text = `kafkajs: ${message}`;
  if (level === logLevel.ERROR) logger.error(fields, text);
  else if (level === logLevel.WARN) logger.warn(fields, text);
  else if (level === logLevel.INFO) logger.info(fields, text);
  else logger.debug(fields, text);
}

/**
 * The `KafkaClient` the transport uses, on kafkajs 2.x. Consumers commit through the latest
 * `eachBatch` payload (`commitOffsetsIfNecessary(offsets)`), which sends one OffsetCommit under
 * the current generation; `consumer.commitOffsets` would retry, and a retry after a rebalance
 * commits under the new generation for a partition that may have moved.
 */
export function kafkajsClient(kafka: Kafka): KafkaClient {
  return {
    consumer: (settings) => new KafkajsConsumer(kafka, settings),
    producer: () => kafkajsProducer(kafka),
    admin: () => kafkajsAdmin(kafka),
  };
}

class KafkajsConsumer implements ConsumerClient {
  private readonly consumer: Consumer;
  private latest: EachBatchPayload | undefined;
  /** Settles the first join `start` waits for; a no-op once it settled. */
  private firstJoinDone: (error?: Error) => void = () => undefined;

  constructor(kafka: Kafka, settings: ConsumerSettings) {
    this.consumer = kafka.consumer({
      groupId: settings.groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      rebalanceTimeout: settings.rebalanceTimeoutMs,
      maxWaitTimeInMs: settings.maxWaitTimeMs,
      // kafkajs restarts a crashed consumer after a delay; during shutdown that restart would
      // rejoin the group behind the transport's back.
      retry: { restartOnFailure: async (error) => settings.restartOnFailure(error) },
    });
  }

  async start(
    topics: readonly string[],
    fromBeginning: boolean,
    handlers: ConsumerHandlers,
  ): Promise<void> {
    const { consumer } = this;
    let joined = false;
    // Settles with the first join, or with a crash kafkajs does not restart from.
    const firstJoin = new Promise<void>((resolve, reject) => {
      this.firstJoinDone = (error) => (error ? reject(error) : resolve());
    });
    firstJoin.catch(() => undefined);
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      joined = true;
      handlers.onGroupJoin({ memberId: payload.memberId, assignment: payload.memberAssignment });
      this.firstJoinDone();
    });
    consumer.on(consumer.events.REBALANCING, () => handlers.onRebalancing());
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      handlers.onCrash(payload.error, payload.restart);
      if (!payload.restart) this.firstJoinDone(payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning });
    // run() returns after the first join, or after the first join crashed (kafkajs may then
    // restart it: `restartOnFailure`).
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // Our eachBatch only queues the records and returns, so running every batch of a fetch at
      // once costs nothing; it puts all of them in the lanes in one tick, before the subscription
      // picks the oldest message across partitions (one at a time, a later partition's batch
      // could be handed out before an earlier message of another partition had arrived).
      partitionsConsumedConcurrently: BATCHES_AT_ONCE,
      eachBatch: async (payload) => {
        this.latest = payload;
        await handlers.eachBatch(toBatch(payload));
      },
    });
    if (joined) return;
    try {
      await firstJoin;
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  pause(topic: string, partitions?: readonly number[]): void {
    // kafkajs throws while it is between a crash and its restart; nothing to pause then.
    ignoreThrow(() =>
      this.consumer.pause([partitions ? { topic, partitions: [...partitions] } : { topic }]),
    );
  }

  resume(topic: string, partitions?: readonly number[]): void {
    ignoreThrow(() =>
      this.consumer.resume([partitions ? { topic, partitions: [...partitions] } : { topic }]),
    );
  }

  seek(topic: string, partition: number, offset: string): void {
    ignoreThrow(() => this.consumer.seek({ topic, partition, offset }));
  }

  async commit(offsets: readonly OffsetCommit[]): Promise<void> {
    if (!this.latest) throw new Error('nothing was fetched yet, so nothing can be committed');
    const byTopic = new Map<string, { partition: number; offset: string }[]>();
    for (const { topic, partition, offset } of offsets) {
      const partitions = byTopic.get(topic) ?? [];
      partitions.push({ partition, offset });
      byTopic.set(topic, partitions);
    }
    await this.latest.commitOffsetsIfNecessary({
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
  }

  async heartbeat(): Promise<void> {
    await this.latest?.heartbeat();
  }

  async stop(): Promise<void> {
    try {
      await this.consumer.disconnect();
    } finally {
      // Stopped between a crashed first join and its restart: kafkajs cancelled the restart.
      this.firstJoinDone(new Error('the Kafka consumer was stopped before it joined its group'));
    }
  }
}

function toBatch(payload: EachBatchPayload): FetchedBatch {
  const { batch } = payload;
  return {
    topic: batch.topic,
    partition: batch.partition,
    messages: batch.messages.map(toFetched),
    lastOffset: batch.lastOffset(),
    resolveOffset: (offset) => payload.resolveOffset(offset),
  };
}

function toFetched(message: KafkaMessage): FetchedMessage {
  const fetched: FetchedMessage = {
    offset: message.offset,
    key: message.key ?? null,
    value: message.value,
    timestamp: message.timestamp,
  };
  if (message.headers !== undefined) fetched.headers = message.headers;
  return fetched;
}

function kafkajsProducer(kafka: Kafka): ProducerClient {
  // The Java-compatible partitioner (kafkajs 2.x default), named so kafkajs does not warn.
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const connection = lazyConnection(
    () => producer.connect(),
    () => producer.disconnect(),
  );
  return {
    async send(topic, records: readonly ProducedRecord[]) {
      await connection.open();
      await producer.send({ topic, acks: -1, messages: records.map((record) => ({ ...record })) });
    },
    close: () => connection.close(),
  };
}

function kafkajsAdmin(kafka: Kafka): AdminClient {
  const admin: Admin = kafka.admin();
  const connection = lazyConnection(
    () => admin.connect(),
    () => admin.disconnect(),
  );
  return {
    async watermarks(topic) {
      await connection.open();
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(
        offsets.map(({ partition, low, high }) => [
          partition,
          { low: BigInt(low), high: BigInt(high) },
        ]),
      );
    },
    async committedOffsets(groupId, topic) {
      await connection.open();
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map(
        (offsets?.partitions ?? []).map(({ partition, offset }) => [partition, BigInt(offset)]),
      );
    },
    async partitionCount(topic) {
      await connection.open();
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        return topics[0]?.partitions.length;
      } catch {
        return undefined;
      }
    },
    async createTopic(topic, partitions) {
      await connection.open();
      await admin.createTopics({
        topics: [{ topic, numPartitions: partitions }],
        waitForLeaders: false,
      });
      // kafkajs's own wait for leaders gives up after its few retries; a busy broker can take
      // longer to show a new topic in its metadata.
      const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
      for (;;) {
        const ready = await admin
          .fetchTopicMetadata({ topics: [topic] })
          .then(({ topics }) => topics[0]?.partitions.every((p) => p.leader >= 0) ?? false)
          .catch(() => false);
        if (ready) return;
        if (Date.now() > deadline) throw new Error(`topic ${topic} has no partition leaders yet`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => connection.close(),
  };
}

/** Connects on first use, once; `close` disconnects only what was connected. */
function lazyConnection(connect: () => Promise<void>, disconnect: () => Promise<void>) {
  let opened: Promise<void> | undefined;
  return {
    open(): Promise<void> {
      opened ??= connect().catch((error: unknown) => {
        opened = undefined; // the next call tries again
        throw error;
      });
      return opened;
    },
    async close(): Promise<void> {
      if (!opened) return;
      const wasOpening = opened;
      opened = undefined;
      await wasOpening.catch(() => undefined);
      await disconnect();
    },
  };
}

function ignoreThrow(call: () => void): void {
  try {
    call();
  } catch {
    // see the callers
  }
}
