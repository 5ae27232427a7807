import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import { deleteKeys, globEscape, serverFacts } from '../redisInfo.js';
import { median } from '../stats.js';
import { BenchBroker, makeMessages } from './broker.js';
import type { ConsumerSession } from './consumers.js';
import { openConsumerChild, openConsumerInline } from './host.js';
import {
  CONSUMER_LABEL,
  CONSUMERS,
  type ConsumeResult,
  type ConsumerInit,
  type ConsumerName,
} from './types.js';

export interface RabbitmqBenchOptions {
  amqpUrl: string;
  redisUrl: string;
  /** Messages per round at prefetch > 1. @default 20000 */
  messages: number;
  /** Messages per round at prefetch 1 (one at a time is slow). @default 2000 */
  sequentialMessages: number;
  /** Measured rounds per consumer and prefetch, alternating; figures are their median. @default 3 */
  runs: number;
  /** Prefetch (raw) = concurrency (idemq) values, each measured on its own. @default [64, 1] */
  prefetch: number[];
  /** Queue type of every queue (`rabbitmq()`'s default is quorum). @default 'quorum' */
  queueType: 'quorum' | 'classic';
  /** Unmeasured messages each consumer session consumes first (JIT, scripts, connections). */
  warmupMessages: number;
  /** Each consumer in a child process (honest CPU and RSS) or in this process (tests). */
  isolation: 'process' | 'inline';
  /** A round fails when no message was settled for this long. @default 60000 */
  stallTimeoutMs: number;
  /** Prefix of every queue, exchange and Redis key the run creates (default: fresh). */
  namespace?: string;
  log?: (line: string) => void;
}

export const RABBITMQ_BENCH_DEFAULTS = Object.freeze({
  messages: 20_000,
  sequentialMessages: 2_000,
  runs: 3,
  prefetch: [64, 1],
  queueType: 'quorum' as const,
  quickMessages: 1_000,
  quickSequentialMessages: 200,
  quickRuns: 1,
  warmupMessages: 1_000,
  stallTimeoutMs: 60_000,
});

/** A fresh namespace for one run: queue and exchange names, Redis keys and requestIds. */
export function transportNamespace(): string {
  return `idemq-bench-${randomBytes(4).toString('hex')}`;
}

/** The source (exchange and queue name) of one round; `run` -1 is the warm-up. */
export function roundSource(
  namespace: string,
  consumer: ConsumerName,
  prefetch: number,
  run: number,
): string {
  return `${namespace}.${consumer}.p${prefetch}.${run < 0 ? 'warm' : `r${run}`}`;
}

/** Every source a run with these options can declare (to clean up after an interruption). */
export function possibleSources(
  namespace: string,
  options: Pick<RabbitmqBenchOptions, 'prefetch' | 'runs'>,
): string[] {
  return CONSUMERS.flatMap((consumer) =>
    options.prefetch.flatMap((prefetch) =>
      Array.from({ length: options.runs + 1 }, (_, i) =>
        roundSource(namespace, consumer, prefetch, i - 1),
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
  prefetch: number;
  messages: number;
  /** Median over rounds. */
  messagesPerSecond: number;
  /** idemq: median over runs of (idemq ÷ raw of the same run); raw: 1. */
  vsRaw?: number;
  /** idemq: median over rounds of script calls / round trips (`store.stats()`) per message. */
  scriptCallsPerMessage?: number;
  roundTripsPerMessage?: number;
  /** idemq: Redis commands its client sent per message (last round), by name. */
  commandsPerMessage?: Record<string, number>;
  cpuMicrosPerMessage: number;
  /** Median over rounds of the consumer process's CPU time ÷ the round's time (1 = one core). */
  cpuShare: number;
  peakRssBytes: number;
  rounds: ConsumeResult[];
  /** Every way a round was not "each message consumed exactly once, nothing left behind". */
  anomalies: string[];
}

export interface TransportGoal {
  name: string;
  target: string;
  actual: string;
  met: boolean;
}

export interface TransportReport {
  transport: 'rabbitmq';
  startedAt: string;
  options: Omit<RabbitmqBenchOptions, 'log' | 'namespace' | 'amqpUrl' | 'redisUrl'> & {
    amqpUrl: string;
    redisUrl: string;
  };
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    node: string;
    os: string;
    rabbitmq: string;
    redis: string;
    /** 1-minute load average at the start and the end. */
    loadAverage: [number, number];
  };
  rows: ConsumerRow[];
  goals: TransportGoal[];
  /** Queues still on the broker after the run (should be none). */
  leftovers: string[];
  durationMs: number;
}

/**
 * A raw amqplib consumer and idemq's `createConsumer` on the same RabbitMQ, the same queue
 * type, the same prefetch and the same pre-filled queues. For each prefetch: one session per
 * consumer (a child process each), a warm-up queue each, then `runs` rounds in which they take
 * turns (the order alternates every run). Every round gets a fresh queue, filled and confirmed
 * before the consumer starts; the measured interval runs from the call that starts consuming
 * to the last ack. Afterwards the queue must hold nothing, and is deleted with everything the
 * round declared; idemq's Redis records of the round are deleted too.
 */
export async function runRabbitmqBench(options: RabbitmqBenchOptions): Promise<TransportReport> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  const namespace = options.namespace ?? transportNamespace();
  const open = options.isolation === 'inline' ? openConsumerInline : openConsumerChild;
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  let broker: BenchBroker | undefined;
  try {
    broker = await BenchBroker.open(options.amqpUrl, options.queueType);
    const redisFacts = await serverFacts(redis);
    const rows: ConsumerRow[] = [];

    for (const prefetch of options.prefetch) {
      const messages =
        prefetch === 1 ? Math.min(options.messages, options.sequentialMessages) : options.messages;
      const sessions = new Map<ConsumerName, ConsumerSession>();
      const rounds = new Map<ConsumerName, ConsumeResult[]>(CONSUMERS.map((c) => [c, []]));
      const anomalies = new Map<ConsumerName, string[]>(CONSUMERS.map((c) => [c, []]));
      const peaks = new Map<ConsumerName, number>();

      const consume = async (consumer: ConsumerName, session: ConsumerSession, run: number) => {
        const source = roundSource(namespace, consumer, prefetch, run);
        const count = run < 0 ? Math.min(messages, options.warmupMessages) : messages;
        const admin = broker as BenchBroker;
        let removed = false;
        try {
          await admin.fill(
            source,
            makeMessages(
              `${namespace}:${consumer}:p${prefetch}:${run < 0 ? 'warm' : `r${run}`}`,
              count,
            ),
          );
          const result = await session.round({
            run,
            queue: source,
            messages: count,
            stallTimeoutMs: options.stallTimeoutMs,
          });
          // The consumer has stopped: what is still in the queue was never acked.
          const state = await admin.inspect(source);
          const dropped = await admin.remove(source);
          removed = true;
          if (run >= 0) {
            anomalies
              .get(consumer)
              ?.push(...checkRound(consumer, result, state.ready, state.deadLetters, dropped));
          }
          return result;
        } finally {
          if (!removed) await admin.remove(source).catch(() => 0);
        }
      };

      try {
        for (const consumer of CONSUMERS) {
          const init: ConsumerInit = {
            consumer,
            amqpUrl: options.amqpUrl,
            redisUrl: options.redisUrl,
            prefetch,
            queueType: options.queueType,
            namespace: `${namespace}:${consumer}:p${prefetch}`,
          };
          log(
            `P=${prefetch} ${consumer}: opening, warm-up ${Math.min(messages, options.warmupMessages)} messages`,
          );
          const session = await open(init);
          sessions.set(consumer, session);
          if (options.warmupMessages > 0) await consume(consumer, session, -1);
        }
        for (let run = 0; run < options.runs; run++) {
          const order = run % 2 === 0 ? [...CONSUMERS] : [...CONSUMERS].reverse();
          for (const consumer of order) {
            const result = await consume(consumer, sessions.get(consumer) as ConsumerSession, run);
            rounds.get(consumer)?.push(result);
            log(
              `P=${prefetch} run ${run + 1}/${options.runs} ${consumer}: ` +
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
      for (const consumer of CONSUMERS) {
        rows.push(
          toRow(consumer, prefetch, messages, rounds.get(consumer) ?? [], raw, {
            anomalies: anomalies.get(consumer) ?? [],
            peakRssBytes: peaks.get(consumer) ?? Number.NaN,
          }),
        );
      }
    }

    const leftovers = await broker.leftovers();
    return {
      transport: 'rabbitmq',
      startedAt: new Date(Date.now() - (performance.now() - started)).toISOString(),
      options: {
        messages: options.messages,
        sequentialMessages: options.sequentialMessages,
        runs: options.runs,
        prefetch: options.prefetch,
        queueType: options.queueType,
        warmupMessages: options.warmupMessages,
        isolation: options.isolation,
        stallTimeoutMs: options.stallTimeoutMs,
        amqpUrl: redactUrl(options.amqpUrl),
        redisUrl: redactUrl(options.redisUrl),
      },
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        os: `${os.type()} ${os.release()} ${os.arch()}`,
        rabbitmq: broker.version,
        redis: `${redisFacts.version} (${redisFacts.mode})`,
        loadAverage: [loadAtStart, os.loadavg()[0] ?? Number.NaN],
      },
      rows,
      goals: evaluateTransportGoals(rows),
      leftovers,
      durationMs: performance.now() - started,
    };
  } finally {
    await broker?.close();
    await deleteKeys(redis, [transportKeyPattern(namespace)]).catch(() => 0);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** What was not "every message consumed exactly once, the queue drained, nothing left". */
export function checkRound(
  consumer: ConsumerName,
  r: ConsumeResult,
  ready: number,
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
  if (consumer === 'idemq') {
    if ((r.events.processed ?? 0) !== r.messages) {
      found.push(`${run}: ${r.events.processed ?? 0}/${r.messages} processed events`);
    }
    const others = Object.entries(r.events).filter(([name, n]) => name !== 'processed' && n > 0);
    if (others.length > 0) {
      found.push(`${run}: other events ${others.map(([name, n]) => `${name} ×${n}`).join(', ')}`);
    }
    if (r.keysDeleted !== r.messages) {
      found.push(`${run}: ${r.keysDeleted} Redis records for ${r.messages} messages`);
    }
  }
  if (ready !== 0) found.push(`${run}: ${ready} messages left in the queue`);
  if (deadLetters !== 0) found.push(`${run}: ${deadLetters} dead letters`);
  if (dropped !== 0) found.push(`${run}: deleting the queues dropped ${dropped} messages`);
  return found;
}

function toRow(
  consumer: ConsumerName,
  prefetch: number,
  messages: number,
  rounds: ConsumeResult[],
  raw: ConsumeResult[],
  extra: { anomalies: string[]; peakRssBytes: number },
): ConsumerRow {
  const per = (f: (r: ConsumeResult) => number) => median(rounds.map(f));
  const last = rounds.at(-1);
  const vsRaw =
    consumer === 'idemq' && raw.length === rounds.length && rounds.length > 0
      ? median(
          rounds.map((r, i) => r.messagesPerSecond / (raw[i] as ConsumeResult).messagesPerSecond),
        )
      : undefined;
  return {
    consumer,
    label: CONSUMER_LABEL[consumer],
    prefetch,
    messages,
    messagesPerSecond: per((r) => r.messagesPerSecond),
    ...(vsRaw === undefined ? {} : { vsRaw }),
    ...(consumer === 'idemq'
      ? {
          scriptCallsPerMessage: per((r) => (r.scriptCalls ?? Number.NaN) / r.messages),
          roundTripsPerMessage: per((r) => (r.storeRoundTrips ?? Number.NaN) / r.messages),
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
    peakRssBytes: extra.peakRssBytes,
    rounds,
    anomalies: extra.anomalies,
  };
}

/** The issue's goal (≥ 0.8× raw at the default prefetch) and the round-trip bound. */
export function evaluateTransportGoals(rows: readonly ConsumerRow[]): TransportGoal[] {
  const goals: TransportGoal[] = [];
  const idemq = rows.filter((r) => r.consumer === 'idemq');
  for (const row of idemq) {
    if (row.vsRaw === undefined || row.prefetch === 1) continue;
    goals.push({
      name: `idemq msg/s vs raw amqplib, prefetch ${row.prefetch}`,
      target: '≥ 0.8×',
      actual: `${fixed(row.vsRaw, 2)}×`,
      met: row.vsRaw >= 0.8,
    });
  }
  if (idemq.length > 0) {
    const worst = Math.max(...idemq.map((r) => r.roundTripsPerMessage ?? Number.NaN));
    goals.push({
      name: 'idemq Redis round trips per message (store.stats())',
      target: '≤ 2',
      actual: fixed(worst, 3),
      met: worst <= 2,
    });
  }
  const clean = rows.every((r) => r.anomalies.length === 0);
  goals.push({
    name: 'every message consumed exactly once, queues drained',
    target: 'yes',
    actual: clean ? 'yes' : 'no',
    met: clean,
  });
  return goals;
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function redactUrl(url: string): string {
  return url.replace(/(\w+:\/\/)([^@/\s]*)@/, '$1***@');
}
