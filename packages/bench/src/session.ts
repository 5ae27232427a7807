import type { SessionHandle } from './childSession.js';
import { type CommandCounts, diffCounts } from './commandCounter.js';
import {
  type Contender,
  type ContenderName,
  createContender,
  type Outcome,
} from './contenders/index.js';
import { postgresGauge } from './postgresGauge.js';
import { redisGauge } from './redisGauge.js';
import type { ServerGauge } from './serverGauge.js';
import { quantile } from './stats.js';
import { type BenchMessage, makeWorkload } from './workload.js';

export interface SessionInit {
  contender: ContenderName;
  concurrency: number;
  redisUrl: string;
  postgresUrl: string;
  /** Unique to this contender and concurrency in this bench run; every key (table) derives from it. */
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
  /** Commands (statements) the contender's clients sent in this phase: its round trips. */
  client: CommandCounts;
  /** Round trips the library counted itself (`store.stats()`), where it counts them. */
  libraryRoundTrips?: number;
  /** `INFO commandstats` delta (INFO itself excluded): includes commands run inside Lua. */
  server: CommandCounts;
  /** CPU time (user + system) this process spent in the phase. */
  cpuMicros: number;
  /** CPU time the server spent in the phase (all its clients: see `noise`). */
  serverCpuMicros: number;
  /** Growth of Redis `used_memory`, or of the contender's table, over the phase. */
  memoryBytes: number;
  /** Other clients' connections busy on the server during the phase (PostgreSQL). */
  otherClients?: number;
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
  /** Records (keys, rows) deleted after the round. */
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
    private readonly gauge: ServerGauge,
  ) {}

  static async open(init: SessionInit): Promise<Session> {
    let session: Session | undefined;
    const contender = await createContender(init.contender, {
      redisUrl: init.redisUrl,
      postgresUrl: init.postgresUrl,
      namespace: init.namespace,
      handler: () => {
        if (session) session.handlerRuns += 1;
      },
    });
    let gauge: ServerGauge;
    try {
      gauge =
        contender.store === 'redis'
          ? redisGauge(init.redisUrl, contender)
          : await postgresGauge(init.postgresUrl, contender);
    } catch (error) {
      // Its table (or keys) must not outlive a session that never opened.
      await contender.close().catch(() => undefined);
      throw error;
    }
    session = new Session(init, contender, gauge);
    if (init.warmupIds > 0) await session.round({ run: -1, ids: init.warmupIds });
    return session;
  }

  /** One measured workload: `ids` messages with duplicates mixed in; records deleted after. */
  async round({ run, ids }: RoundRequest): Promise<RoundResult> {
    const { contender, gauge } = this;
    const workload = makeWorkload(`${this.init.namespace}:${run < 0 ? 'warm' : `r${run}`}`, ids);
    collectGarbage();
    const runsBefore = this.handlerRuns;
    const hitsBefore = contender.cacheHits?.() ?? 0;

    const phase = async (messages: readonly BenchMessage[]) => {
      const { value, server } = await gauge.around(async () => {
        const client0 = contender.sent.snapshot();
        const library0 = contender.libraryRoundTrips?.() ?? 0;
        const cpu0 = process.cpuUsage();
        const driven = await drive(contender, messages, this.init.concurrency);
        const cpu = process.cpuUsage(cpu0);
        const client = diffCounts(contender.sent.snapshot(), client0);
        const library = contender.libraryRoundTrips?.();
        return {
          driven,
          client,
          cpuMicros: cpu.user + cpu.system,
          ...(library === undefined ? {} : { libraryRoundTrips: library - library0 }),
        };
      });
      const { driven, ...measured } = value;
      return {
        driven,
        result: {
          messages: messages.length,
          ms: driven.ms,
          outcomes: driven.outcomes,
          p50Ms: quantile(driven.latencies, 0.5),
          p99Ms: quantile(driven.latencies, 0.99),
          ...measured,
          server: server.commands,
          serverCpuMicros: server.cpuMicros,
          memoryBytes: server.memoryBytes,
          ...(contender.store === 'postgres' ? { otherClients: server.otherClients } : {}),
        } satisfies PhaseResult,
      };
    };

    const stream = await phase(workload.stream);
    const duplicatesAgain = await phase(workload.duplicates);
    const keysDeleted = await gauge.clear();
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
    await this.gauge.close();
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
