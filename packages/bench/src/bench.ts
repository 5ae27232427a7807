import os from 'node:os';
import { openServers } from './benchServers.js';
import { type CeilingResult, measureCeiling } from './ceiling.js';
import {
  BASELINE_OF,
  type ContenderName,
  LABEL,
  ROLE,
  STORE,
  type StoreName,
} from './contenders/index.js';
import { POSTGRES_POOL_SIZE } from './contenders/postgresPool.js';
import { openChild, openInline, type SessionHost } from './host.js';
import { type MachineFacts, machineFacts, redactUrl } from './machine.js';
import { type Pinning, pinCores } from './pinning.js';
import { benchNamespace } from './runData.js';
import type { PhaseResult, RoundResult } from './session.js';
import { median } from './stats.js';
import { fixed, type Goal } from './table.js';

export type { Goal };

/** A goal of the issue, and the store whose rows it judges. */
export interface StoreGoal extends Goal {
  store: StoreName;
}

export interface BenchOptions {
  redisUrl: string;
  postgresUrl: string;
  /** Unique ids per round. @default 20000 */
  ids: number;
  /** Measured rounds per contender and concurrency; figures are their median. @default 5 */
  runs: number;
  concurrency: number[];
  contenders: ContenderName[];
  /**
   * Stores whose contenders are left out, with a line saying why, when the server does not
   * answer (the CLI's default run for PostgreSQL); any other server that does not answer fails
   * the run. @default []
   */
  optionalStores?: StoreName[];
  /** Each session in a child process (honest RSS) or in this process (tests). @default 'process' */
  isolation: 'process' | 'inline';
  /** Unmeasured ids each session sends first. @default min(ids, 2000) */
  warmupIds: number;
  /** Measure the Redis server's ceiling with redis-benchmark. @default true */
  ceiling: boolean;
  /** Pin local servers to CPU 0 and the contenders to the others (`pinCores`; the CLI's default). */
  pin?: boolean;
  /** Prefix of every key (and table) the run writes (default: `benchNamespace()`). */
  namespace?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface Row {
  contender: ContenderName;
  store: StoreName;
  label: string;
  role: 'idemq' | 'peer' | 'floor' | 'baseline';
  concurrency: number;
  /** Median over rounds of messages (unique + duplicates) per second. */
  messagesPerSecond: number;
  /** Median over rounds of (this ÷ baseline of the same round); undefined without a baseline. */
  vsBaseline?: number;
  /**
   * Client-side commands (round trips) per processed message / per duplicate, median: as the
   * library counts them (`store.stats()`) where it does, else as counted where they leave.
   */
  roundTripsPerProcessed: number;
  roundTripsPerDuplicate: number;
  /** INFO commandstats commands (those inside Lua included) per processed / duplicate, median. */
  serverCommandsPerProcessed: number;
  serverCommandsPerDuplicate: number;
  /** Client-side commands by name for one processed message / one duplicate (last round). */
  commandsPerProcessed: Record<string, number>;
  commandsPerDuplicate: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the contender's process per message of the stream, median. */
  cpuMicrosPerMessage: number;
  /** CPU time of the server (Redis, PostgreSQL) per message of the stream, median. */
  serverCpuMicrosPerMessage: number;
  /** Growth of Redis `used_memory` (of the table) over the stream per id, median: a record's size. */
  bytesPerRecord: number;
  peakRssBytes: number;
  rounds: RoundResult[];
  /** Anything that was not as the workload demands (wrong outcome counts, keys left). */
  anomalies: string[];
  /** Signs that other clients used the shared server during a measured phase. */
  noise: string[];
}

export interface BenchReport {
  startedAt: string;
  /** The options of the run (URLs without credentials), and the PostgreSQL contenders' pool. */
  options: Omit<BenchOptions, 'log' | 'namespace'> & { postgresPoolSize: number };
  /** The machine, and the version of each server the run used. */
  machine: MachineFacts & { redis?: string; postgres?: string; pinning?: string };
  ceilings: CeilingResult[];
  rows: Row[];
  goals: StoreGoal[];
  /** Why contenders that were asked for did not run (PostgreSQL not answering). */
  skipped: string[];
  durationMs: number;
}

export const BENCH_DEFAULTS = Object.freeze({
  ids: 20_000,
  runs: 5,
  concurrency: [1, 64],
  quickIds: 2_000,
  quickRuns: 1,
});

/**
 * Runs every contender on the same workload against its server (Redis or PostgreSQL): for each
 * concurrency, one session per contender (a child process each), then `runs` rounds in which the
 * contenders take turns (the order rotates every round, so drift and warm caches favour no one).
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  const benchId = options.namespace ?? benchNamespace();
  const servers = await openServers(options, log);
  const { contenders } = servers;
  const open = options.isolation === 'inline' ? openInline : openChild;

  let pinning: Pinning | undefined;
  try {
    if (options.pin) pinning = pinCores(servers.pinnable);
    if (pinning) log(pinning.description);
    const ceilings: CeilingResult[] = [];
    if (options.ceiling && servers.versions.redis) {
      for (const clients of options.concurrency) {
        log(`redis-benchmark, ${clients} client(s)`);
        const ceiling = await measureCeiling(options.redisUrl, clients, `${benchId}:ceiling`);
        if (ceiling) ceilings.push(ceiling);
        else log('redis-benchmark not found: no ceiling measured');
      }
    }

    const rows: Row[] = [];
    for (const concurrency of options.concurrency) {
      const hosts = new Map<ContenderName, SessionHost>();
      const rounds = new Map<ContenderName, RoundResult[]>(contenders.map((c) => [c, []]));
      const ends = new Map<ContenderName, number>();
      try {
        for (const contender of contenders) {
          log(`c=${concurrency} ${contender}: opening (warm-up ${options.warmupIds} ids)`);
          hosts.set(
            contender,
            await open({
              contender,
              concurrency,
              redisUrl: options.redisUrl,
              postgresUrl: options.postgresUrl,
              namespace: `${benchId}:${contender}:c${concurrency}`,
              warmupIds: options.warmupIds,
            }),
          );
        }
        for (let run = 0; run < options.runs; run++) {
          const order = rotate(contenders, run);
          for (const contender of order) {
            const result = await (hosts.get(contender) as SessionHost).round({
              run,
              ids: options.ids,
            });
            rounds.get(contender)?.push(result);
            log(
              `c=${concurrency} run ${run + 1}/${options.runs} ${contender}: ` +
                `${Math.round(result.messagesPerSecond)} msg/s`,
            );
          }
        }
      } finally {
        for (const [contender, host] of hosts) {
          const end = await host.close().catch(() => ({ maxRssBytes: Number.NaN }));
          ends.set(contender, end.maxRssBytes);
        }
      }
      for (const contender of contenders) {
        const baseline = rounds.get(BASELINE_OF[STORE[contender]]);
        rows.push(
          toRow(contender, concurrency, rounds.get(contender) ?? [], baseline, ends.get(contender)),
        );
      }
    }

    return {
      startedAt: new Date(Date.now() - (performance.now() - started)).toISOString(),
      options: {
        ids: options.ids,
        runs: options.runs,
        concurrency: options.concurrency,
        contenders,
        optionalStores: options.optionalStores ?? [],
        isolation: options.isolation,
        warmupIds: options.warmupIds,
        ceiling: options.ceiling,
        pin: options.pin ?? false,
        redisUrl: redactUrl(options.redisUrl),
        postgresUrl: redactUrl(options.postgresUrl),
        postgresPoolSize: POSTGRES_POOL_SIZE,
      },
      machine: {
        ...machineFacts(loadAtStart),
        ...servers.versions,
        ...(pinning ? { pinning: pinning.description } : {}),
      },
      ceilings,
      rows,
      goals: evaluateGoals(rows),
      skipped: servers.skipped,
      durationMs: performance.now() - started,
    };
  } finally {
    pinning?.restore();
    // Anything a failed round left behind, and the ceiling's key.
    await servers.removeRunData(benchId);
    await servers.close();
  }
}

function toRow(
  contender: ContenderName,
  concurrency: number,
  rounds: RoundResult[],
  baseline: RoundResult[] | undefined,
  peakRssBytes = Number.NaN,
): Row {
  const per = (f: (r: RoundResult) => number) => median(rounds.map(f));
  const anomalies: string[] = [];
  const noise: string[] = [];
  for (const r of rounds) {
    const { ids } = r;
    const dups = r.stream.messages - ids;
    if (r.stream.outcomes.processed !== ids) {
      anomalies.push(
        `run ${r.run + 1}: ${r.stream.outcomes.processed}/${ids} first deliveries processed`,
      );
    }
    if (r.stream.outcomes.duplicate !== dups || r.duplicatesAgain.outcomes.duplicate !== dups) {
      anomalies.push(
        `run ${r.run + 1}: ${r.stream.outcomes.duplicate}/${dups} duplicates skipped, ` +
          `${r.duplicatesAgain.outcomes.duplicate}/${dups} when sent again`,
      );
    }
    if (r.handlerRuns !== ids)
      anomalies.push(`run ${r.run + 1}: handler ran ${r.handlerRuns} times for ${ids} ids`);
    if (r.keysDeleted !== ids) {
      const records = STORE[contender] === 'redis' ? 'keys' : 'rows';
      anomalies.push(`run ${r.run + 1}: ${r.keysDeleted} ${records} left for ${ids} ids`);
    }
    for (const phase of [r.stream, r.duplicatesAgain]) {
      const during = phase === r.stream ? 'the stream' : 'the duplicates sent again';
      // The library's own count and the one taken where statements leave must agree.
      if (phase.libraryRoundTrips !== undefined && phase.libraryRoundTrips !== phase.client.total) {
        anomalies.push(
          `run ${r.run + 1}: the store counted ${phase.libraryRoundTrips} round trips during ` +
            `${during}, its clients sent ${phase.client.total}`,
        );
      }
      // The server counts everyone's commands. Of the names this contender sends, it should see
      // exactly what the contender sent; more means other clients of a shared server were busy.
      const foreign = Object.entries(phase.client.byName).reduce(
        (sum, [name, calls]) => sum + Math.max(0, (phase.server.byName[name] ?? 0) - calls),
        0,
      );
      if (foreign / phase.messages > 0.01) {
        noise.push(
          `run ${r.run + 1}: other clients sent ${foreign} commands of the same names during ` +
            `${during} (server figures are upper bounds)`,
        );
      }
      if (phase.otherClients) {
        noise.push(
          `run ${r.run + 1}: ${phase.otherClients} other client connection(s) were busy during ` +
            `${during} (server figures are upper bounds)`,
        );
      }
    }
  }
  const last = rounds.at(-1);
  const vsBaseline =
    baseline && baseline.length === rounds.length && rounds.length > 0
      ? median(
          rounds.map(
            (r, i) => r.messagesPerSecond / (baseline[i] as RoundResult).messagesPerSecond,
          ),
        )
      : undefined;
  const roundTrips = (p: PhaseResult) => p.libraryRoundTrips ?? p.client.total;
  return {
    contender,
    store: STORE[contender],
    label: LABEL[contender],
    role: ROLE[contender],
    concurrency,
    messagesPerSecond: per((r) => r.messagesPerSecond),
    ...(vsBaseline === undefined ? {} : { vsBaseline }),
    roundTripsPerProcessed: per((r) => perProcessed(r, roundTrips)),
    roundTripsPerDuplicate: per((r) => perDuplicate(r, roundTrips)),
    serverCommandsPerProcessed: per((r) => perProcessed(r, (p) => p.server.total)),
    serverCommandsPerDuplicate: per((r) => perDuplicate(r, (p) => p.server.total)),
    commandsPerProcessed: last ? byName(last, perProcessed) : {},
    commandsPerDuplicate: last ? byName(last, perDuplicate) : {},
    p50Ms: per((r) => r.p50Ms),
    p99Ms: per((r) => r.p99Ms),
    cpuMicrosPerMessage: per((r) => r.stream.cpuMicros / r.stream.messages),
    serverCpuMicrosPerMessage: per((r) => r.stream.serverCpuMicros / r.stream.messages),
    bytesPerRecord: per((r) => r.stream.memoryBytes / r.ids),
    peakRssBytes,
    rounds,
    anomalies,
    noise,
  };
}

/** A count per duplicate: from the duplicates sent again alone. */
function perDuplicate(r: RoundResult, count: (phase: PhaseResult) => number): number {
  return count(r.duplicatesAgain) / r.duplicatesAgain.messages;
}

/**
 * A count per first delivery: the stream's, less what its duplicates cost at the rate they did
 * when sent alone (exact when each message has calls of its own, as at concurrency 1).
 */
function perProcessed(r: RoundResult, count: (phase: PhaseResult) => number): number {
  const duplicates = r.stream.messages - r.ids;
  return Math.max(0, count(r.stream) - duplicates * perDuplicate(r, count)) / r.ids;
}

/** Commands by name per message of a kind, in the last round. */
function byName(
  r: RoundResult,
  per: (r: RoundResult, count: (phase: PhaseResult) => number) => number,
): Record<string, number> {
  const names = new Set([
    ...Object.keys(r.stream.client.byName),
    ...Object.keys(r.duplicatesAgain.client.byName),
  ]);
  const counts: Record<string, number> = {};
  for (const name of names) {
    const value = per(r, (phase) => phase.client.byName[name] ?? 0);
    if (value > 0) counts[name] = value;
  }
  return counts;
}

/** The issues' goals, judged from this run's figures, each with the store whose rows it judges. */
export function evaluateGoals(rows: readonly Row[]): StoreGoal[] {
  const of = (store: StoreName) => rows.filter((r) => r.store === store);
  return [
    ...redisGoals(of('redis')).map((goal) => ({ ...goal, store: 'redis' as const })),
    ...postgresGoals(of('postgres')).map((goal) => ({ ...goal, store: 'postgres' as const })),
  ];
}

/** Issue 28's goals for the Redis store. */
function redisGoals(rows: readonly Row[]): Goal[] {
  const goals: Goal[] = [];
  const idemqRows = rows.filter((r) => r.contender === 'idemq');
  if (idemqRows.length > 0) {
    const worstProcessed = Math.max(...idemqRows.map((r) => r.roundTripsPerProcessed));
    const worstDuplicate = Math.max(...idemqRows.map((r) => r.roundTripsPerDuplicate));
    goals.push({
      name: 'idemq round trips per processed message',
      target: '≤ 2',
      actual: fixed(worstProcessed, 3),
      met: worstProcessed <= 2,
    });
    goals.push({
      name: 'idemq round trips per duplicate',
      target: '≤ 1',
      actual: fixed(worstDuplicate, 3),
      met: worstDuplicate <= 1,
    });
  }
  for (const row of idemqRows) {
    const floor = rows.find((r) => r.concurrency === row.concurrency && r.role === 'floor');
    if (row.concurrency === 1 && floor) {
      const ratio = row.messagesPerSecond / floor.messagesPerSecond;
      goals.push({
        name: 'idemq msg/s at concurrency 1 vs hand-written fenced Lua',
        target: '≥ 0.9×',
        actual: `${fixed(ratio, 2)}×`,
        met: ratio >= 0.9,
      });
    }
    if (row.concurrency === 64) {
      const peers = rows.filter((r) => r.concurrency === 64 && r.role === 'peer');
      const best = peers.reduce<Row | undefined>(
        (a, b) => (a && a.messagesPerSecond >= b.messagesPerSecond ? a : b),
        undefined,
      );
      if (best) {
        const ratio = row.messagesPerSecond / best.messagesPerSecond;
        goals.push({
          name: `idemq msg/s at concurrency 64 vs best peer (${best.contender})`,
          target: '≥ 3×',
          actual: `${fixed(ratio, 2)}×`,
          met: ratio >= 3,
        });
      }
      if (row.vsBaseline !== undefined) {
        goals.push({
          name: 'idemq msg/s at concurrency 64 vs hand-written SET NX baseline',
          target: '≥ 1.5×',
          actual: `${fixed(row.vsBaseline, 2)}×`,
          met: row.vsBaseline >= 1.5,
        });
      }
    }
  }
  const largest = Math.max(...idemqRows.map((r) => r.bytesPerRecord));
  if (idemqRows.length > 0 && Number.isFinite(largest)) {
    goals.push({
      name: 'idemq Redis bytes per COMPLETED record (fingerprinted, no result)',
      target: '≤ 200',
      actual: fixed(largest, 0),
      met: largest <= 200,
    });
  }
  return goals;
}

/** Issue 29's goals for the PostgreSQL store. */
function postgresGoals(rows: readonly Row[]): Goal[] {
  const idemqRows = rows.filter((r) => r.contender === 'idemq-postgres');
  if (idemqRows.length === 0) return [];
  const worstProcessed = Math.max(...idemqRows.map((r) => r.roundTripsPerProcessed));
  const goals: Goal[] = [
    {
      name: 'idemq round trips per processed message (store.stats())',
      target: '≤ 2',
      actual: fixed(worstProcessed, 3),
      met: worstProcessed <= 2,
    },
  ];
  const loaded = idemqRows.find((r) => r.concurrency === 64);
  if (loaded?.vsBaseline !== undefined) {
    goals.push({
      name: 'idemq msg/s at concurrency 64 vs hand-written INSERT … ON CONFLICT DO NOTHING',
      target: '≥ 0.8×',
      actual: `${fixed(loaded.vsBaseline, 2)}×`,
      met: loaded.vsBaseline >= 0.8,
    });
  }
  return goals;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
