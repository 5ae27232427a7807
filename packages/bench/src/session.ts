import { Redis } from 'ioredis';
import type { SessionHandle } from './childSession.js';
import { type CommandCounts, diffCounts } from './commandCounter.js';
import {
  type Contender,
  type ContenderName,
  createContender,
  type Outcome,
} from './contenders/index.js';
import { commandStats, deleteKeys, serverCpuMicros, usedMemoryBytes } from './redisInfo.js';
import { quantile } from './stats.js';
import { type BenchMessage, makeWorkload } from './workload.js';

export interface SessionInit {
  contender: ContenderName;
  concurrency: number;
  redisUrl: string;
  /** Unique to this contender and concurrency in this bench run; every key lives under it. */
  namespace: string;
  /** Unmeasured ids sent first (JIT, script load, connection warm-up); 0 for none. */
  warmupIds: number;
}

export interface PhaseResult {
  messages: number;
  ms: number;
  outcomes: Record<Outcome, number>;
  p50Ms: number;
  p99Ms: number;
  /** Commands the contender's clients sent in this phase: its round trips. */
  client: CommandCounts;
  /** `INFO commandstats` delta (INFO itself excluded): includes commands run inside Lua. */
  server: CommandCounts;
  /** CPU time (user + system) this process spent in the phase. */
  cpuMicros: number;
  /** CPU time the Redis server spent in the phase (all its clients: see `noise`). */
  serverCpuMicros: number;
  /** Growth of the server's `used_memory` over the phase: what the records written take. */
  memoryBytes: number;
}

export interface RoundResult {
  run: number;
  /** The timed stream: every id once, a fifth of them again mixed in after their original. */
  stream: PhaseResult;
  /** Untimed: as many duplicates of other ids, alone: what a first duplicate costs (its commands). */
  duplicatesAgain: PhaseResult;
  /** Ids in the round (first deliveries of the stream). */
  ids: number;
  /** Messages of the stream over its time. */
  messagesPerSecond: number;
  /** Per-message latency over the stream. */
  p50Ms: number;
  p99Ms: number;
  handlerRuns: number;
  cacheHits?: number;
  keysDeleted: number;
}

/** One measured workload: `ids` unique messages, then their duplicates; run -1 is the warm-up. */
export interface RoundRequest {
  run: number;
  ids: number;
}

export interface SessionEnd {
  /** Peak resident set of the process that ran the session (`resourceUsage().maxRSS`). */
  maxRssBytes: number;
}

/**
 * One contender at one concurrency: opened once, then measured round after round, each round
 * on fresh ids. Runs in its own child process under the CLI (honest RSS), or inline in tests.
 */
export class Session implements SessionHandle<RoundRequest, RoundResult, SessionEnd> {
  private handlerRuns = 0;

  private constructor(
    private readonly init: SessionInit,
    private readonly contender: Contender,
    private readonly info: Redis,
  ) {}

  static async open(init: SessionInit): Promise<Session> {
    const info = new Redis(init.redisUrl, { maxRetriesPerRequest: 1 });
    let session: Session | undefined;
    const contender = await createContender(init.contender, {
      redisUrl: init.redisUrl,
      namespace: init.namespace,
      handler: () => {
        if (session) session.handlerRuns += 1;
      },
    });
    session = new Session(init, contender, info);
    if (init.warmupIds > 0) await session.round({ run: -1, ids: init.warmupIds });
    return session;
  }

  /** One measured workload: `ids` messages with duplicates mixed in; keys deleted after. */
  async round({ run, ids }: RoundRequest): Promise<RoundResult> {
    const { contender, info } = this;
    const workload = makeWorkload(`${this.init.namespace}:${run < 0 ? 'warm' : `r${run}`}`, ids);
    collectGarbage();
    const runsBefore = this.handlerRuns;
    const hitsBefore = contender.cacheHits?.() ?? 0;

    const phase = async (messages: readonly BenchMessage[]) => {
      const memory0 = await usedMemoryBytes(info);
      const server0 = await commandStats(info);
      const serverCpu0 = await serverCpuMicros(info);
      const client0 = contender.sent.snapshot();
      const cpu0 = process.cpuUsage();
      const driven = await drive(contender, messages, this.init.concurrency);
      const cpu = process.cpuUsage(cpu0);
      const client1 = contender.sent.snapshot();
      const serverCpu1 = await serverCpuMicros(info);
      const server1 = await commandStats(info);
      const memory1 = await usedMemoryBytes(info);
      return {
        driven,
        result: {
          messages: messages.length,
          ms: driven.ms,
          outcomes: driven.outcomes,
          p50Ms: quantile(driven.latencies, 0.5),
          p99Ms: quantile(driven.latencies, 0.99),
          client: diffCounts(client1, client0),
          server: diffCounts(server1, server0),
          cpuMicros: cpu.user + cpu.system,
          serverCpuMicros: serverCpu1 - serverCpu0,
          memoryBytes: memory1 - memory0,
        } satisfies PhaseResult,
      };
    };

    const stream = await phase(workload.stream);
    const duplicatesAgain = await phase(workload.duplicates);
    const keysDeleted = await deleteKeys(info, contender.keyPatterns);
    return {
      run,
      stream: stream.result,
      duplicatesAgain: duplicatesAgain.result,
      ids,
      messagesPerSecond: workload.stream.length / (stream.driven.ms / 1000),
      p50Ms: stream.result.p50Ms,
      p99Ms: stream.result.p99Ms,
      handlerRuns: this.handlerRuns - runsBefore,
      ...(contender.cacheHits ? { cacheHits: contender.cacheHits() - hitsBefore } : {}),
      keysDeleted,
    };
  }

  async close(): Promise<SessionEnd> {
    await this.contender.close();
    await this.info.quit();
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}

/**
 * Keeps `concurrency` messages in flight, each started in a task of its own (`setImmediate`), as
 * a server or consumer starts its calls from separate socket reads: a pool of loops that resume
 * in one tick would issue its calls in lock-step waves, which a coalescing store turns into full
 * batches no real workload gives (docs/performance-history.md). A duplicate is sent once its
 * original has been answered.
 */
function drive(
  contender: Contender,
  messages: readonly BenchMessage[],
  concurrency: number,
): Promise<{ ms: number; latencies: Float64Array; outcomes: Record<Outcome, number> }> {
  const latencies = new Float64Array(messages.length);
  const outcomes: Record<Outcome, number> = { processed: 0, duplicate: 0, 'in-progress': 0 };
  const answered: Promise<unknown>[] = new Array(messages.length);
  return new Promise((resolve, reject) => {
    let next = 0;
    let done = 0;
    const started = performance.now();
    const startOne = () => {
      if (next >= messages.length) return;
      const index = next++;
      const message = messages[index] as BenchMessage;
      const original = message.originalAt === undefined ? undefined : answered[message.originalAt];
      const sentAt = performance.now();
      const handled = original
        ? original.then(() => contender.handle(message))
        : contender.handle(message);
      answered[index] = handled;
      handled.then((outcome) => {
        latencies[index] = performance.now() - sentAt;
        outcomes[outcome] += 1;
        done += 1;
        if (done === messages.length) {
          resolve({ ms: performance.now() - started, latencies, outcomes });
        } else {
          setImmediate(startOne);
        }
      }, reject);
    };
    if (messages.length === 0) resolve({ ms: 0, latencies, outcomes });
    for (let i = 0; i < Math.min(concurrency, messages.length); i++) setImmediate(startOne);
  });
}

/** Starts each round with a clean heap where the process allows it (`--expose-gc`). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
}
