import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import { type MachineFacts, machineFacts, redactUrl } from '../machine.js';
import { deleteKeys, globEscape, serverFacts } from '../redisInfo.js';
import { median } from '../stats.js';
import { fixed, type Goal } from '../table.js';
import { type BenchBroker, makeMessages, openBroker } from './broker.js';
import { openConsumerChild, openConsumerInline } from './host.js';
import type { ConsumerSession } from './idemqConsumer.js';
import {
  CONSUMER_LABEL,
  CONSUMERS,
  type ConsumeResult,
  type ConsumerInit,
  type ConsumerName,
  type Endpoints,
  isIdemqConsumer,
  type TransportName,
  type TransportSettings,
} from './types.js';

export interface TransportBenchOptions {
  transport: TransportName;
  endpoints: Endpoints;
  settings: TransportSettings;
  /** Messages per round at concurrency > 1. @default 20000 */
  messages: number;
  /** Messages per round at concurrency 1 (one at a time is slow). @default 2000 */
  sequentialMessages: number;
  /** Measured rounds per consumer and concurrency, alternating; figures are medians. @default 3 */
  runs: number;
  /** Concurrency values (RabbitMQ: prefetch), each measured on its own. */
  concurrency: number[];
  /** The consumers compared, raw among them (the ratios' base). @default raw, hand, idemq */
  consumers: readonly ConsumerName[];
  /** Unmeasured messages each consumer session consumes first (JIT, scripts, connections). */
  warmupMessages: number;
  /** Each consumer in a child process (honest CPU and RSS) or in this process (tests). */
  isolation: 'process' | 'inline';
  /** A round fails when no message was settled for this long. @default 60000 */
  stallTimeoutMs: number;
  /** Prefix of every queue, topic and Redis key the run creates (default: fresh). */
  namespace?: string;
  log?: (line: string) => void;
}

export const TRANSPORT_BENCH_DEFAULTS = Object.freeze({
  messages: 20_000,
  sequentialMessages: 2_000,
  runs: 3,
  /** Per transport: RabbitMQ also one at a time; Kafka and SQS at 64 only. */
  concurrency: Object.freeze({ rabbitmq: [64, 1], kafka: [64], sqs: [64] }) as Readonly<
    Record<TransportName, readonly number[]>
  >,
  queueType: 'quorum' as const,
  partitions: 6,
  sqsWaitTimeMs: 1_000,
  quickMessages: 1_000,
  quickSequentialMessages: 200,
  quickRuns: 1,
  warmupMessages: 1_000,
  stallTimeoutMs: 60_000,
});

/** A fresh namespace for one run: queue, topic and group names, Redis keys and requestIds. */
export function transportNamespace(): string {
  return `idemq-bench-${randomBytes(4).toString('hex')}`;
}

/**
 * The source (queue or topic) of one round; `run` -1 is the warm-up. Letters, digits and
 * hyphens only: valid as a RabbitMQ queue, a Kafka topic and an SQS queue name alike.
 */
export function roundSource(
  namespace: string,
  consumer: ConsumerName,
  concurrency: number,
  run: number,
): string {
  return `${namespace}-${consumer}-c${concurrency}-${run < 0 ? 'warm' : `r${run}`}`;
}

/** Every source a run with these options can create (to clean up after an interruption). */
export function possibleSources(
  namespace: string,
  options: Pick<TransportBenchOptions, 'concurrency' | 'runs'>,
): string[] {
  return CONSUMERS.flatMap((consumer) =>
    options.concurrency.flatMap((concurrency) =>
      Array.from({ length: options.runs + 1 }, (_, i) =>
        roundSource(namespace, consumer, concurrency, i - 1),
      ),
    ),
  );
}

/** SCAN pattern of every Redis key a run under `namespace` writes. */
export function transportKeyPattern(namespace: string): string {
  return `${globEscape(namespace)}:*`;
}

export interface ConsumerRow {
  consumer: ConsumerName;
  label: string;
  concurrency: number;
  messages: number;
  /** Median over rounds. */
  messagesPerSecond: number;
  /** Every consumer but raw: median over runs of (this ÷ raw of the same run); raw: undefined. */
  vsRaw?: number;
  /** Median over rounds of the time until consuming had started (Kafka: the group join). */
  startMs: number;
  /**
   * Per message, median over rounds: idemq's script calls, its and the floors' round trips
   * (`store.stats()`); hand's commands (each a round trip).
   */
  scriptCallsPerMessage?: number;
  roundTripsPerMessage?: number;
  /** Every consumer but raw: Redis commands their client sent per message (last round), by name. */
  commandsPerMessage?: Record<string, number>;
  cpuMicrosPerMessage: number;
  /** Every consumer but raw: median over rounds of the Redis server's CPU per message. */
  redisCpuMicrosPerMessage?: number;
  /** Median over rounds of the consumer process's CPU time ÷ the round's time (1 = one core). */
  cpuShare: number;
  /** Median over rounds of every process's CPU per message (consumer, broker, Redis). */
  machineCpuMicrosPerMessage: number;
  /** Median over rounds of every process's CPU ÷ (the round's time × cores): 1 = saturated. */
  machineBusyShare: number;
  peakRssBytes: number;
  rounds: ConsumeResult[];
  /** Every way a round was not "each message consumed exactly once, nothing left behind". */
  anomalies: string[];
}

export interface TransportReport {
  transport: TransportName;
  startedAt: string;
  options: Omit<TransportBenchOptions, 'log' | 'namespace'>;
  machine: MachineFacts & { broker: string; redis: string };
  rows: ConsumerRow[];
  goals: Goal[];
  /** Sources still on the broker after the run (should be none). */
  leftovers: string[];
  durationMs: number;
}

/**
 * A raw consumer, the same raw consumer with hand-written `SET NX` idempotency, and idemq's
 * `createConsumer` on the same broker, the same settings, the same concurrency and the same
 * pre-filled sources. For each concurrency: one session per consumer (a child process each), a
 * warm-up source each, then `runs` rounds in which they take turns (the order alternates every
 * run). Every round gets a fresh source, filled before the consumer
 * starts; the measured interval runs from the call that starts consuming to the last
 * settlement. Afterwards nothing may be left unconsumed; the source is deleted with everything
 * the round created, and the Redis records of the round too.
 */
export async function runTransportBench(options: TransportBenchOptions): Promise<TransportReport> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  const namespace = options.namespace ?? transportNamespace();
  const open = options.isolation === 'inline' ? openConsumerInline : openConsumerChild;
  const { transport, endpoints } = options;
  const redis = new Redis(endpoints.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  let broker: BenchBroker | undefined;
  try {
    broker = await openBroker(transport, endpoints, options.settings);
    const redisFacts = await serverFacts(redis);
    const rows: ConsumerRow[] = [];
    for (const concurrency of options.concurrency) {
      rows.push(...(await measureConcurrency(options, broker, open, namespace, concurrency, log)));
    }
    // Every session is closed by now.
    await broker.settle();
    const leftovers = await broker.existing(possibleSources(namespace, options));
    const { log: _log, namespace: _namespace, ...kept } = options;
    return {
      transport,
      startedAt: new Date(Date.now() - (performance.now() - started)).toISOString(),
      options: {
        ...kept,
        endpoints: {
          ...endpoints,
          amqpUrl: redactUrl(endpoints.amqpUrl),
          redisUrl: redactUrl(endpoints.redisUrl),
        },
      },
      machine: {
        ...machineFacts(loadAtStart),
        broker: broker.description,
        redis: `Redis ${redisFacts.version} (${redisFacts.mode}) at ${redactUrl(endpoints.redisUrl)}`,
      },
      rows,
      goals: evaluateTransportGoals(transport, rows),
      leftovers,
      durationMs: performance.now() - started,
    };
  } finally {
    await broker?.close();
    await deleteKeys(redis, [transportKeyPattern(namespace)]).catch(() => 0);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Every consumer at one concurrency: their rows, raw first. */
async function measureConcurrency(
  options: TransportBenchOptions,
  broker: BenchBroker,
  open: (init: ConsumerInit) => Promise<ConsumerSession>,
  namespace: string,
  concurrency: number,
  log: (line: string) => void,
): Promise<ConsumerRow[]> {
  const messages =
    concurrency === 1 ? Math.min(options.messages, options.sequentialMessages) : options.messages;
  const warmup = Math.min(messages, options.warmupMessages);
  const sessions = new Map<ConsumerName, ConsumerSession>();
  // In table order, whatever order they were asked in.
  const consumers = CONSUMERS.filter((c) => options.consumers.includes(c));
  const rounds = new Map<ConsumerName, ConsumeResult[]>(consumers.map((c) => [c, []]));
  const anomalies = new Map<ConsumerName, string[]>(consumers.map((c) => [c, []]));
  const peaks = new Map<ConsumerName, number>();
  const at = `${options.transport} c=${concurrency}`;

  const consume = async (consumer: ConsumerName, session: ConsumerSession, run: number) => {
    const source = roundSource(namespace, consumer, concurrency, run);
    const count = run < 0 ? warmup : messages;
    let removed = false;
    try {
      await broker.fill(source, makeMessages(source, count));
      const result = await session.round({
        run,
        source,
        messages: count,
        stallTimeoutMs: options.stallTimeoutMs,
      });
      // The consumer has stopped: what is still in the source was never acked.
      const state = await broker.inspect(source);
      const dropped = await broker.remove(source);
      removed = true;
      if (run >= 0) {
        anomalies
          .get(consumer)
          ?.push(...checkRound(consumer, result, state.left, state.deadLetters, dropped));
      }
      return result;
    } finally {
      if (!removed) await broker.remove(source).catch(() => 0);
    }
  };

  try {
    for (const consumer of consumers) {
      log(`${at} ${consumer}: opening, warm-up ${warmup} messages`);
      const session = await open({
        transport: options.transport,
        consumer,
        endpoints: options.endpoints,
        settings: options.settings,
        concurrency,
        namespace: `${namespace}:${consumer}:c${concurrency}`,
      });
      sessions.set(consumer, session);
      if (warmup > 0) await consume(consumer, session, -1);
    }
    for (let run = 0; run < options.runs; run++) {
      const order = run % 2 === 0 ? [...consumers] : [...consumers].reverse();
      for (const consumer of order) {
        const result = await consume(consumer, sessions.get(consumer) as ConsumerSession, run);
        rounds.get(consumer)?.push(result);
        log(
          `${at} run ${run + 1}/${options.runs} ${consumer}: ` +
            `${Math.round(result.messagesPerSecond)} msg/s (${messages} messages)`,
        );
      }
    }
  } finally {
    for (const [consumer, session] of sessions) {
      const end = await session.close().catch(() => ({ maxRssBytes: Number.NaN }));
      peaks.set(consumer, end.maxRssBytes);
    }
  }
  const raw = rounds.get('raw') ?? [];
  return consumers.map((consumer) =>
    toRow(options.transport, consumer, concurrency, messages, rounds.get(consumer) ?? [], raw, {
      anomalies: anomalies.get(consumer) ?? [],
      peakRssBytes: peaks.get(consumer) ?? Number.NaN,
      cores: os.cpus().length,
    }),
  );
}

/** What was not "every message consumed exactly once, the source drained, nothing left". */
export function checkRound(
  consumer: ConsumerName,
  r: ConsumeResult,
  left: number,
  deadLetters: number,
  dropped: number,
): string[] {
  const run = `run ${r.run + 1}`;
  const found: string[] = [];
  if (r.acked !== r.messages) found.push(`${run}: ${r.acked}/${r.messages} messages acked`);
  if (r.handlerRuns !== r.messages || r.distinctIds !== r.messages) {
    found.push(
      `${run}: handler ran ${r.handlerRuns} times for ${r.distinctIds} distinct ids (${r.messages} messages)`,
    );
  }
  if (r.duplicateRuns !== 0) found.push(`${run}: ${r.duplicateRuns} handler runs for a seen id`);
  if (isIdemqConsumer(consumer)) {
    if ((r.events.processed ?? 0) !== r.messages) {
      found.push(`${run}: ${r.events.processed ?? 0}/${r.messages} processed events`);
    }
    const others = Object.entries(r.events).filter(([name, n]) => name !== 'processed' && n > 0);
    if (others.length > 0) {
      found.push(`${run}: other events ${others.map(([name, n]) => `${name} ×${n}`).join(', ')}`);
    }
  }
  if (consumer !== 'raw' && r.keysDeleted !== r.messages) {
    found.push(`${run}: ${r.keysDeleted} Redis records for ${r.messages} messages`);
  }
  if (left !== 0) found.push(`${run}: ${left} messages not consumed`);
  if (deadLetters !== 0) found.push(`${run}: ${deadLetters} dead letters`);
  if (dropped !== 0) found.push(`${run}: deleting the source dropped ${dropped} messages`);
  return found;
}

function toRow(
  transport: TransportName,
  consumer: ConsumerName,
  concurrency: number,
  messages: number,
  rounds: ConsumeResult[],
  raw: ConsumeResult[],
  extra: { anomalies: string[]; peakRssBytes: number; cores: number },
): ConsumerRow {
  const per = (f: (r: ConsumeResult) => number) => median(rounds.map(f));
  const last = rounds.at(-1);
  const vsRaw =
    consumer !== 'raw' && raw.length === rounds.length && rounds.length > 0
      ? median(
          rounds.map((r, i) => r.messagesPerSecond / (raw[i] as ConsumeResult).messagesPerSecond),
        )
      : undefined;
  return {
    consumer,
    label: CONSUMER_LABEL[transport][consumer],
    concurrency,
    messages,
    messagesPerSecond: per((r) => r.messagesPerSecond),
    ...(vsRaw === undefined ? {} : { vsRaw }),
    startMs: per((r) => r.startMs),
    ...(isIdemqConsumer(consumer)
      ? { scriptCallsPerMessage: per((r) => (r.scriptCalls ?? Number.NaN) / r.messages) }
      : {}),
    ...(consumer !== 'raw'
      ? {
          roundTripsPerMessage: per((r) => (r.storeRoundTrips ?? Number.NaN) / r.messages),
          redisCpuMicrosPerMessage: per((r) => (r.redisCpuMicros ?? Number.NaN) / r.messages),
          commandsPerMessage: Object.fromEntries(
            Object.entries(last?.redisCommands?.byName ?? {}).map(([name, n]) => [
              name,
              n / (last?.messages ?? 1),
            ]),
          ),
        }
      : {}),
    cpuMicrosPerMessage: per((r) => r.cpuMicros / r.messages),
    cpuShare: per((r) => r.cpuMicros / (r.ms * 1_000)),
    machineCpuMicrosPerMessage: per((r) => r.machineCpuMicros / r.messages),
    machineBusyShare: per((r) => r.machineCpuMicros / (r.ms * 1_000 * extra.cores)),
    peakRssBytes: extra.peakRssBytes,
    rounds,
    anomalies: extra.anomalies,
  };
}

/** Least msg/s against raw that idemq must reach at concurrency > 1, per transport. */
const VS_RAW_GOAL: Record<TransportName, number> = { kafka: 0.5, rabbitmq: 0.8, sqs: 0.9 };
/** Kafka: least msg/s against the hand-written SET NX consumer, and most consumer CPU. */
const KAFKA_VS_HAND_GOAL = 1.5;
const KAFKA_CPU_GOAL_MICROS = 30;

/**
 * The goals for idemq's rows (per-message and batch handler) at concurrency > 1: msg/s against
 * raw (and, on Kafka, against the hand-written consumer and consumer CPU per message), the
 * round-trip bound at every concurrency, and a clean run.
 */
export function evaluateTransportGoals(
  transport: TransportName,
  rows: readonly ConsumerRow[],
): Goal[] {
  const goals: Goal[] = [];
  const ours = rows.filter((r) => isIdemqConsumer(r.consumer));
  for (const row of ours) {
    if (row.vsRaw === undefined || row.concurrency === 1) continue;
    const who = `${row.consumer} at concurrency ${row.concurrency}`;
    const vsRawGoal = VS_RAW_GOAL[transport];
    goals.push({
      name: `${who}: msg/s vs raw`,
      target: `≥ ${vsRawGoal}×`,
      actual: `${fixed(row.vsRaw, 2)}×`,
      met: row.vsRaw >= vsRawGoal,
    });
    if (transport !== 'kafka') continue;
    const hand = rows.find((r) => r.consumer === 'hand' && r.concurrency === row.concurrency);
    if (hand) {
      const vsHand = row.messagesPerSecond / hand.messagesPerSecond;
      goals.push({
        name: `${who}: msg/s vs hand-written SET NX`,
        target: `≥ ${KAFKA_VS_HAND_GOAL}×`,
        actual: `${fixed(vsHand, 2)}×`,
        met: vsHand >= KAFKA_VS_HAND_GOAL,
      });
    }
    goals.push({
      name: `${who}: consumer CPU µs / msg`,
      target: `≤ ${KAFKA_CPU_GOAL_MICROS}`,
      actual: fixed(row.cpuMicrosPerMessage, 0),
      met: row.cpuMicrosPerMessage <= KAFKA_CPU_GOAL_MICROS,
    });
  }
  if (ours.length > 0) {
    const worst = Math.max(...ours.map((r) => r.roundTripsPerMessage ?? Number.NaN));
    goals.push({
      name: 'idemq Redis round trips per message (store.stats())',
      target: '≤ 2',
      actual: fixed(worst, 3),
      met: worst <= 2,
    });
  }
  const clean = rows.every((r) => r.anomalies.length === 0);
  goals.push({
    name: 'every message consumed exactly once, nothing left',
    target: 'yes',
    actual: clean ? 'yes' : 'no',
    met: clean,
  });
  return goals;
}
