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
  processed: PhaseResult;
  duplicates: PhaseResult;
  /** Messages of both phases over the time of both phases. */
  messagesPerSecond: number;
  /** Per-message latency over both phases. */
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

  /** One measured workload: `ids` unique messages, then their duplicates; keys deleted after. */
  async round({ run, ids }: RoundRequest): Promise<RoundResult> {
    const { contender, info } = this;
    const workload = makeWorkload(`${this.init.namespace}:${run < 0 ? 'warm' : `r${run}`}`, ids);
    collectGarbage();
    const runsBefore = this.handlerRuns;
    const hitsBefore = contender.cacheHits?.() ?? 0;

    const phase = async (messages: BenchMessage[]) => {
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

    const processed = await phase(workload.unique);
    const duplicates = await phase(workload.duplicates);
    const keysDeleted = await deleteKeys(info, contender.keyPatterns);

    const all = new Float64Array(
      processed.driven.latencies.length + duplicates.driven.latencies.length,
    );
    all.set(processed.driven.latencies);
    all.set(duplicates.driven.latencies, processed.driven.latencies.length);
    const messages = workload.unique.length + workload.duplicates.length;
    return {
      run,
      processed: processed.result,
      duplicates: duplicates.result,
      messagesPerSecond: messages / ((processed.driven.ms + duplicates.driven.ms) / 1000),
      p50Ms: quantile(all, 0.5),
      p99Ms: quantile(all, 0.99),
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

/** `concurrency` workers pull from one shared list until it is empty, timing each message. */
async function drive(contender: Contender, messages: readonly BenchMessage[], concurrency: number) {
  const latencies = new Float64Array(messages.length);
  const outcomes: Record<Outcome, number> = { processed: 0, duplicate: 0, 'in-progress': 0 };
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const index = next++;
      const started = performance.now();
      const outcome = await contender.handle(messages[index] as BenchMessage);
      latencies[index] = performance.now() - started;
      outcomes[outcome] += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ms: performance.now() - started, latencies, outcomes };
}

/** Starts each round with a clean heap where the process allows it (`--expose-gc`). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
}
