import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { positiveIntegerReader } from './args.js';
import { killChildren } from './children.js';
import { childSession, type SessionHandle } from './childSession.js';
import { describeMachine, machineFacts, redactUrl } from './machine.js';
import { deleteKeys, globEscape, serverFacts } from './redisInfo.js';

/**
 * What differs between the benchmarks of servers under load (`pnpm bench http`, `pnpm bench
 * grpc`): their command, servers, load option and how they run and report.
 */
export interface ServerBench<Name extends string, Row> {
  /** The sub-command, also in the Redis namespace: `http`, `grpc`. */
  command: string;
  usage: string;
  servers: readonly Name[];
  isServerName(name: string): name is Name;
  /** The option that sets the load: `connections` (autocannon), `concurrency` (calls in flight). */
  loadOption: string;
  defaults: { runs: number; duration: number; load: number };
  run(options: ServerBenchRun<Name>): Promise<Row[]>;
  markdown(rows: Row[], command: string, machine: string): string;
}

/** A parsed command line. */
export interface ServerBenchOptions<Name extends string> {
  runs: number;
  durationSeconds: number;
  /** The value of `loadOption`. */
  load: number;
  servers: Name[];
  json?: string;
}

/** What a bench's `run` gets. */
export interface ServerBenchRun<Name extends string> {
  redisUrl: string;
  servers: Name[];
  runs: number;
  durationSeconds: number;
  load: number;
  namespace: string;
  log(line: string): void;
}

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseServerBenchCli<Name extends string, Row>(
  bench: ServerBench<Name, Row>,
  argv: string[],
): ServerBenchOptions<Name> | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      duration: { type: 'string' },
      [bench.loadOption]: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const text = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const problems: string[] = [];
  const positive = positiveIntegerReader(problems);
  const names = text('only')
    ?.split(',')
    .map((n) => n.trim()) ?? [...bench.servers];
  for (const name of names) {
    if (!bench.isServerName(name)) {
      problems.push(
        `--only: unknown server ${JSON.stringify(name)} (known: ${bench.servers.join(', ')})`,
      );
    }
  }
  const json = text('json');
  const options: ServerBenchOptions<Name> = {
    runs: positive('runs', text('runs'), bench.defaults.runs),
    durationSeconds: positive('duration', text('duration'), bench.defaults.duration),
    load: positive(bench.loadOption, text(bench.loadOption), bench.defaults.load),
    servers: bench.servers.filter((s) => names.includes(s)),
    ...(json === undefined ? {} : { json }),
  };
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${bench.usage}`);
  return options;
}

/** `pnpm bench <command> …` (argv after the sub-command): runs, prints the table, cleans Redis. */
export async function serverBenchMain<Name extends string, Row>(
  bench: ServerBench<Name, Row>,
  argv: string[],
): Promise<void> {
  const options = parseServerBenchCli(bench, argv);
  if (options === 'help') {
    process.stdout.write(`${bench.usage}\n`);
    return;
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const namespace = `idemq-bench-${bench.command}-${randomBytes(4).toString('hex')}`;
  const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const cleanUp = () => deleteKeys(admin, [`*${globEscape(namespace)}*`]).catch(() => 0);
  const interrupt = async () => {
    killChildren();
    await cleanUp();
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  const startedAt = new Date();
  const command = ['pnpm bench', bench.command, ...argv].join(' ');
  try {
    const rows = await bench.run({
      redisUrl,
      servers: options.servers,
      runs: options.runs,
      durationSeconds: options.durationSeconds,
      load: options.load,
      namespace,
      log: (line) => process.stderr.write(`[bench] ${line}\n`),
    });
    const facts = await serverFacts(admin);
    const machine = describeMachine(
      machineFacts(loadAtStart),
      [`Redis ${facts.version} at ${redactUrl(redisUrl)}`],
      startedAt.toISOString(),
      Date.now() - startedAt.getTime(),
    );
    process.stdout.write(`\n${bench.markdown(rows, command, machine)}\n`);
    if (options.json) {
      await mkdir(dirname(options.json), { recursive: true });
      await writeFile(options.json, `${JSON.stringify({ command, machine, rows }, null, 2)}\n`);
    }
  } finally {
    await cleanUp();
    admin.disconnect();
  }
}

/** Each request a new key, or one key repeated (every request after the first a replay). */
export type KeyMode = 'new' | 'replay';

/** One server under one key mode. */
export type Variant<Name extends string> = readonly [Name, KeyMode];

/** Every server with new keys, and the guarded ones with a replayed key too, in table order. */
export function benchVariants<Name extends string>(
  servers: readonly Name[],
  guarded: readonly Name[],
): Variant<Name>[] {
  return servers.flatMap((name): Variant<Name>[] =>
    guarded.includes(name)
      ? [
          [name, 'new'],
          [name, 'replay'],
        ]
      : [[name, 'new']],
  );
}

/** What `interleavedRounds` loads and how it reports a round. */
export interface RoundPlan<Name extends string, Round> {
  variants: readonly Variant<Name>[];
  runs: number;
  durationSeconds: number;
  namespace: string;
  load(variant: Variant<Name>, seconds: number, tag: string): Promise<Round>;
  describe(round: Round): string;
  log(line: string): void;
}

/**
 * A one-second unmeasured load of each variant (JIT, connections, scripts loaded), then `runs`
 * rounds with every variant in turn, so that drift on the machine touches all alike. The rounds
 * of each variant, in the order of `variants`.
 */
export async function interleavedRounds<Name extends string, Round>(
  plan: RoundPlan<Name, Round>,
): Promise<Round[][]> {
  const { variants, namespace } = plan;
  for (const [name, mode] of variants) {
    await plan.load([name, mode], 1, `${namespace}-warm-${name}-${mode}`);
  }
  const rounds = variants.map((): Round[] => []);
  for (let run = 0; run < plan.runs; run++) {
    for (const [index, [name, mode]] of variants.entries()) {
      const tag = `${namespace}-r${run}-${name}-${mode}`;
      const round = await plan.load([name, mode], plan.durationSeconds, tag);
      plan.log(`round ${run + 1}/${plan.runs} ${name} ${mode}: ${plan.describe(round)}`);
      rounds[index]?.push(round);
    }
  }
  return rounds;
}

/** Asked of a bench's server between loads: read its counters, then zero them. */
export interface CountersRequest {
  reset: boolean;
}

/** A bench's server in its child process, and the port it listens on. */
export interface ServerSession<Counters> {
  session: SessionHandle<CountersRequest, Counters, { maxRssBytes: number }>;
  port: number;
}

/**
 * Starts each named server in a child process of its own (`worker`, given `{ server, redisUrl,
 * namespace }`) and reads its port; closes the ones started if one fails to start.
 */
export async function openServerSessions<Name extends string, Counters extends { port: number }>(
  worker: URL,
  names: readonly Name[],
  redisUrl: string,
  namespace: string,
): Promise<Map<Name, ServerSession<Counters>>> {
  const servers = new Map<Name, ServerSession<Counters>>();
  try {
    for (const server of names) {
      const session = await childSession<
        { server: Name; redisUrl: string; namespace: string },
        CountersRequest,
        Counters,
        { maxRssBytes: number }
      >(worker, { server, redisUrl, namespace });
      const { port } = await session.round({ reset: true });
      servers.set(server, { session, port });
    }
    return servers;
  } catch (error) {
    await closeServerSessions(servers);
    throw error;
  }
}

/** Closes the servers' child processes. */
export async function closeServerSessions(
  servers: Map<string, ServerSession<unknown>>,
): Promise<void> {
  for (const { session } of servers.values()) await session.close().catch(() => undefined);
}
