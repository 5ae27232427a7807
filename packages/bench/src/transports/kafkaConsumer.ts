/**
 * Kafka consumer benchmark: idemq's `createConsumer` (Kafka transport, Redis store, no-op handler)
 * beside a raw kafkajs `eachBatch` consumer, both reading one pre-filled topic, in one run.
 *
 * Both consumers read the same N messages with a fresh consumer group each, from the call that
 * starts consuming to the N-th message handled (raw: handler returned and offset resolved; idemq:
 * the N-th `processed` event, i.e. claimed, handled, completed in Redis and acked). The group join
 * is inside that interval; it is also measured on its own (start until `run()` / `start()`
 * resolved, both resolve once the member has its partitions) and a rate without it is reported.
 */
import { type ConsumerEventName, createConsumer, encodeBody, uuidv7 } from '@idemq/core';
import { createKafkajs, KafkaHeaders, kafka } from '@idemq/kafka';
import { redisStore } from '@idemq/redis';
import { Redis } from 'ioredis';
import { deleteKeys, globEscape } from '../redisInfo.js';

export interface KafkaConsumerBenchOptions {
  /** Messages pre-published to the topic and consumed by each contender in each run. */
  messages: number;
  /** Partitions of the topic; also the raw consumer's `partitionsConsumedConcurrently`. */
  partitions: number;
  /** idemq `concurrency` (handlers at once over all partitions). */
  concurrency: number;
  /** Measured runs per contender, alternating which goes first; the median is reported. */
  runs: number;
  brokers: string[];
  redisUrl: string;
  /**
   * The Kafka transport's `partitionConcurrency` for idemq (messages of one partition out at
   * once; `concurrency` still caps the total). @default concurrency
   */
  partitionConcurrency?: number;
  /** A round fails when nothing was handled for this long. @default 60000 */
  stallTimeoutMs?: number;
}

export const KAFKA_CONSUMER_BENCH_DEFAULTS = Object.freeze({
  messages: 20_000,
  partitions: 6,
  concurrency: 64,
  runs: 3,
  stallTimeoutMs: 60_000,
});

export type KafkaContender = 'raw' | 'idemq';

export const KAFKA_CONTENDER_LABEL: Record<KafkaContender, string> = {
  raw: 'raw kafkajs eachBatch consumer',
  idemq: 'idemq createConsumer + kafka() + redisStore',
};

/** One contender consuming the whole topic once. */
export interface KafkaConsumerRound {
  contender: KafkaContender;
  run: number;
  messages: number;
  /** From the call that starts consuming to the N-th message handled. */
  ms: number;
  /** Of `ms`: until the member had its partitions (connect, subscribe, group join and sync). */
  joinMs: number;
  messagesPerSecond: number;
  /** N / (ms − joinMs). */
  messagesPerSecondAfterJoin: number;
  /** Handler runs, distinct requestIds among them, and runs for a requestId seen before. */
  handlerRuns: number;
  distinctIds: number;
  duplicateRuns: number;
  /** idemq: consumer events by name (`processed`, `duplicate`, `retry`, `error`…). */
  events?: Record<string, number>;
  /** idemq: `store.stats().roundTrips` over the round. */
  storeRoundTrips?: number;
  storeScriptCalls?: number;
}

export interface KafkaContenderSummary {
  /** Medians over the runs. */
  messagesPerSecond: number;
  messagesPerSecondAfterJoin: number;
  joinMs: number;
}

export interface KafkaConsumerBenchResult {
  topic: string;
  messages: number;
  partitions: number;
  concurrency: number;
  /** The Kafka transport's `partitionConcurrency` idemq ran with. */
  partitionConcurrency: number;
  runs: number;
  rounds: KafkaConsumerRound[];
  raw: KafkaContenderSummary;
  idemq: KafkaContenderSummary;
  /** idemq / raw, of the median msg/s (with join), and of the median msg/s after the join. */
  ratio: number;
  ratioAfterJoin: number;
  /** idemq's Redis round trips per message, median over its rounds. */
  roundTripsPerMessage: number;
  /** Every round of both contenders handled every message exactly once. */
  exactlyOnce: boolean;
}

/** The business handler of both consumers: does nothing. */
const noop = async (_body: unknown): Promise<void> => {};

/** Counts handler runs and runs for a requestId seen before. */
class HandlerTally {
  runs = 0;
  duplicates = 0;
  private readonly seen = new Set<string>();

  add(requestId: string): void {
    this.runs += 1;
    if (this.seen.has(requestId)) this.duplicates += 1;
    else this.seen.add(requestId);
  }

  get distinct(): number {
    return this.seen.size;
  }
}

/** Resolves at the `messages`-th tick (recording the time); rejects when nothing moved for a while. */
class Completion {
  private count = 0;
  private lastProgress = performance.now();
  private resolve: (() => void) | undefined;
  private reject: ((error: Error) => void) | undefined;
  private readonly timer: NodeJS.Timeout;
  endedAt = Number.NaN;
  readonly done: Promise<void>;

  constructor(
    private readonly messages: number,
    stallMs: number,
    describe: () => string,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined);
    this.timer = setInterval(
      () => {
        if (performance.now() - this.lastProgress > stallMs) {
          this.finish(new Error(`no progress for ${stallMs} ms: ${describe()}`));
        }
      },
      Math.min(1_000, stallMs),
    );
  }

  tick(): void {
    this.count += 1;
    this.lastProgress = performance.now();
    if (this.count === this.messages) {
      this.endedAt = this.lastProgress;
      this.finish();
    }
  }

  finish(error?: Error): void {
    clearInterval(this.timer);
    if (error) this.reject?.(error);
    else this.resolve?.();
    this.resolve = undefined;
    this.reject = undefined;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

function headerText(value: Buffer | string | (Buffer | string)[] | undefined): string {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  if (last === undefined) return '';
  return typeof last === 'string' ? last : last.toString('utf8');
}

function unique(label: string): string {
  return `idemq-bench-${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

type KafkajsClient = ReturnType<typeof createKafkajs>;

/** Creates the topic, waits for its leaders, and fills it with N idemq-stamped JSON records. */
async function prepareTopic(client: KafkajsClient, options: KafkaConsumerBenchOptions) {
  const topic = unique('kafka-consumer');
  const admin = client.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: options.partitions }],
      waitForLeaders: false,
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await admin
        .fetchTopicMetadata({ topics: [topic] })
        .then(
          ({ topics }) =>
            topics[0]?.partitions.length === options.partitions &&
            topics[0].partitions.every((p) => p.leader >= 0),
        )
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`topic ${topic} has no partition leaders yet`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await admin.disconnect();
  }

  // As the transport's `publish` stamps them: a UUIDv7 requestId header and the JSON body's
  // content type; spread evenly over the partitions. Batched, since filling is not measured.
  const producer = client.producer();
  await producer.connect();
  try {
    const batch = 1_000;
    for (let from = 0; from < options.messages; from += batch) {
      const messages = [];
      for (let i = from; i < Math.min(from + batch, options.messages); i += 1) {
        const { bytes, contentType } = encodeBody({ body: { n: i, amount: 10, note: 'bench' } });
        messages.push({
          partition: i % options.partitions,
          key: null,
          value: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          headers: {
            [KafkaHeaders.requestId]: uuidv7(),
            ...(contentType === undefined ? {} : { [KafkaHeaders.contentType]: contentType }),
          },
        });
      }
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return topic;
}

/** Deletes the topic (and any `<topic>.*` the transport made) and the bench's consumer groups. */
async function cleanupTopic(client: KafkajsClient, topic: string, groups: readonly string[]) {
  const admin = client.admin();
  await admin.connect();
  try {
    if (groups.length > 0) await admin.deleteGroups([...groups]).catch(() => undefined);
    const topics = (await admin.listTopics()).filter(
      (name) => name === topic || name.startsWith(`${topic}.`),
    );
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** The raw kafkajs consumer: `eachBatch`, every offset resolved, commits as kafkajs autoCommits. */
async function rawRound(
  client: KafkajsClient,
  topic: string,
  run: number,
  options: KafkaConsumerBenchOptions,
  groups: string[],
): Promise<KafkaConsumerRound> {
  const groupId = unique(`raw-${run}`);
  groups.push(groupId);
  const tally = new HandlerTally();
  const completion = new Completion(
    options.messages,
    options.stallTimeoutMs ?? KAFKA_CONSUMER_BENCH_DEFAULTS.stallTimeoutMs,
    () => `raw handled ${tally.runs} of ${options.messages}`,
  );
  // The transport's default fetch wait, so both wait alike on an empty partition.
  const consumer = client.consumer({ groupId, maxWaitTimeInMs: 1_000 });
  const startedAt = performance.now();
  let joinedAt = Number.NaN;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: options.partitions,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isStale }) => {
        for (const message of batch.messages) {
          if (isStale()) break;
          await noop(message.value);
          tally.add(headerText(message.headers?.[KafkaHeaders.requestId]));
          resolveOffset(message.offset);
          completion.tick();
        }
        await commitOffsetsIfNecessary();
        await heartbeat();
      },
    });
    joinedAt = performance.now();
    await completion.done;
  } finally {
    completion.finish();
    await consumer.disconnect();
  }
  return roundResult('raw', run, options.messages, startedAt, joinedAt, completion.endedAt, tally);
}

/** idemq: `createConsumer` on the Kafka transport with a Redis store and a no-op handler. */
async function idemqRound(
  topic: string,
  run: number,
  options: KafkaConsumerBenchOptions,
  partitionConcurrency: number,
  groups: string[],
): Promise<KafkaConsumerRound> {
  const groupId = unique(`idemq-${run}`);
  groups.push(groupId);
  const prefix = unique(`idemq-${run}`);
  const transport = kafka({
    brokers: options.brokers,
    clientId: 'idemq-bench',
    groupId: () => groupId,
    partitionConcurrency,
  });
  const store = redisStore({ url: options.redisUrl, prefix });
  await store.ready();
  const tally = new HandlerTally();
  const events: Record<string, number> = {};
  const completion = new Completion(
    options.messages,
    options.stallTimeoutMs ?? KAFKA_CONSUMER_BENCH_DEFAULTS.stallTimeoutMs,
    () => `idemq handled ${tally.runs} of ${options.messages}, events ${JSON.stringify(events)}`,
  );
  const consumer = createConsumer({
    transport,
    store,
    source: topic,
    scope: 'bench',
    concurrency: options.concurrency,
    handler: async (message) => {
      await noop(message.value);
      tally.add(message.requestId);
    },
  });
  const names: ConsumerEventName[] = [
    'processed',
    'duplicate',
    'retry',
    'in-progress',
    'dead-letter',
    'store-error',
    'lease-lost',
    'error',
  ];
  for (const name of names) {
    consumer.on(name, () => {
      events[name] = (events[name] ?? 0) + 1;
      if (name === 'processed' || name === 'duplicate') completion.tick();
    });
  }
  const before = store.stats();
  const startedAt = performance.now();
  let joinedAt = Number.NaN;
  let after = before;
  try {
    await consumer.start();
    joinedAt = performance.now();
    await completion.done;
    after = store.stats();
  } finally {
    completion.finish();
    await consumer.stop();
    await transport.close();
    await store.close();
    const redis = new Redis(options.redisUrl, { lazyConnect: true });
    try {
      await redis.connect();
      await deleteKeys(redis, [`${globEscape(prefix)}:*`]);
    } finally {
      redis.disconnect();
    }
  }
  return {
    ...roundResult('idemq', run, options.messages, startedAt, joinedAt, completion.endedAt, tally),
    events,
    storeRoundTrips: after.roundTrips - before.roundTrips,
    storeScriptCalls: after.scriptCalls - before.scriptCalls,
  };
}

function roundResult(
  contender: KafkaContender,
  run: number,
  messages: number,
  startedAt: number,
  joinedAt: number,
  endedAt: number,
  tally: HandlerTally,
): KafkaConsumerRound {
  const ms = endedAt - startedAt;
  const joinMs = joinedAt - startedAt;
  return {
    contender,
    run,
    messages,
    ms,
    joinMs,
    messagesPerSecond: (messages * 1_000) / ms,
    messagesPerSecondAfterJoin: (messages * 1_000) / (ms - joinMs),
    handlerRuns: tally.runs,
    distinctIds: tally.distinct,
    duplicateRuns: tally.duplicates,
  };
}

function summarize(rounds: readonly KafkaConsumerRound[]): KafkaContenderSummary {
  return {
    messagesPerSecond: median(rounds.map((r) => r.messagesPerSecond)),
    messagesPerSecondAfterJoin: median(rounds.map((r) => r.messagesPerSecondAfterJoin)),
    joinMs: median(rounds.map((r) => r.joinMs)),
  };
}

/**
 * Creates a fresh topic, pre-publishes `messages` idemq-stamped records (not measured), then
 * consumes all of them `runs` times with each contender, alternating which goes first, each time
 * with a fresh consumer group (and for idemq a fresh Redis prefix). Deletes the topic, the groups
 * and the Redis keys afterwards.
 */
export async function runKafkaConsumerBench(
  options: KafkaConsumerBenchOptions,
): Promise<KafkaConsumerBenchResult> {
  const partitionConcurrency = options.partitionConcurrency ?? options.concurrency;
  for (const [name, value] of Object.entries({
    messages: options.messages,
    partitions: options.partitions,
    concurrency: options.concurrency,
    runs: options.runs,
    partitionConcurrency,
  })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be an integer ≥ 1`);
  }
  const client = createKafkajs({ brokers: options.brokers, clientId: 'idemq-bench' });
  const topic = await prepareTopic(client, options);
  const groups: string[] = [];
  const rounds: KafkaConsumerRound[] = [];
  try {
    for (let run = 0; run < options.runs; run += 1) {
      const order: KafkaContender[] = run % 2 === 0 ? ['raw', 'idemq'] : ['idemq', 'raw'];
      for (const contender of order) {
        rounds.push(
          contender === 'raw'
            ? await rawRound(client, topic, run, options, groups)
            : await idemqRound(topic, run, options, partitionConcurrency, groups),
        );
      }
    }
  } finally {
    await cleanupTopic(client, topic, groups);
  }
  const rawRounds = rounds.filter((r) => r.contender === 'raw');
  const idemqRounds = rounds.filter((r) => r.contender === 'idemq');
  const raw = summarize(rawRounds);
  const idemq = summarize(idemqRounds);
  return {
    topic,
    messages: options.messages,
    partitions: options.partitions,
    concurrency: options.concurrency,
    partitionConcurrency,
    runs: options.runs,
    rounds,
    raw,
    idemq,
    ratio: idemq.messagesPerSecond / raw.messagesPerSecond,
    ratioAfterJoin: idemq.messagesPerSecondAfterJoin / raw.messagesPerSecondAfterJoin,
    roundTripsPerMessage: median(
      idemqRounds.map((r) => (r.storeRoundTrips ?? Number.NaN) / r.messages),
    ),
    exactlyOnce: rounds.every(
      (r) => r.handlerRuns === r.messages && r.distinctIds === r.messages && r.duplicateRuns === 0,
    ),
  };
}

const integer = (n: number) => Math.round(n).toLocaleString('en-US');

/** The result as a Markdown table, for the docs. */
export function formatKafkaConsumerTable(result: KafkaConsumerBenchResult): string {
  const lines = [
    '| messages | partitions | concurrency | msg/s raw kafkajs | msg/s idemq | ratio | ratio after join | Redis round trips/msg | join ms raw / idemq |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${integer(result.messages)} | ${result.partitions} | ${result.concurrency} (partitionConcurrency ${result.partitionConcurrency}) | ${integer(result.raw.messagesPerSecond)} | ${integer(result.idemq.messagesPerSecond)} | ${result.ratio.toFixed(2)} | ${result.ratioAfterJoin.toFixed(2)} | ${result.roundTripsPerMessage.toFixed(3)} | ${integer(result.raw.joinMs)} / ${integer(result.idemq.joinMs)} |`,
  ];
  return lines.join('\n');
}
