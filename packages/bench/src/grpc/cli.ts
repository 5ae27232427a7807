import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { positiveIntegerReader } from '../args.js';
import { killChildren } from '../children.js';
import { describeMachine, machineFacts, redactUrl } from '../machine.js';
import { deleteKeys, globEscape, serverFacts } from '../redisInfo.js';
import { runGrpcBench } from './run.js';
import { grpcMarkdown } from './summary.js';
import { GRPC_COMMAND, GRPC_SERVERS, type GrpcServerName, isGrpcServerName } from './types.js';

export const GRPC_BENCH_DEFAULTS = Object.freeze({
  runs: 3,
  duration: 5,
  concurrency: 64,
  probe: 50,
});

export const GRPC_USAGE = `Usage: pnpm bench grpc [options]
A trivial unary Charge on grpc-js bare and behind idempotency interceptors, all on the same
Redis, loaded by grpc-js clients in a child process: calls/s, p50/p99, server CPU µs per call,
Redis round trips per new call and per replay, handler runs when 100 calls with one key arrive
at once.
  --runs <n>          rounds per server, interleaved; figures are medians (default ${GRPC_BENCH_DEFAULTS.runs})
  --duration <s>      seconds per round (default ${GRPC_BENCH_DEFAULTS.duration})
  --concurrency <n>   calls kept in flight (default ${GRPC_BENCH_DEFAULTS.concurrency})
  --only <names>      some of: ${GRPC_SERVERS.join(', ')}
  --json <file>       write the rows (every round) as JSON
Redis: REDIS_URL (default redis://127.0.0.1:6379); every key contains
idemq-bench-grpc-<random>; they are deleted after the run.`;

export interface GrpcCliOptions {
  runs: number;
  durationSeconds: number;
  concurrency: number;
  servers: GrpcServerName[];
  json?: string;
}

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseGrpcCli(argv: string[]): GrpcCliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const problems: string[] = [];
  const positive = positiveIntegerReader(problems);
  const names = values.only?.split(',').map((n) => n.trim()) ?? [...GRPC_SERVERS];
  for (const name of names) {
    if (!isGrpcServerName(name)) {
      problems.push(
        `--only: unknown server ${JSON.stringify(name)} (known: ${GRPC_SERVERS.join(', ')})`,
      );
    }
  }
  const options: GrpcCliOptions = {
    runs: positive('runs', values.runs, GRPC_BENCH_DEFAULTS.runs),
    durationSeconds: positive('duration', values.duration, GRPC_BENCH_DEFAULTS.duration),
    concurrency: positive('concurrency', values.concurrency, GRPC_BENCH_DEFAULTS.concurrency),
    servers: GRPC_SERVERS.filter((s) => names.includes(s)),
    ...(values.json === undefined ? {} : { json: values.json }),
  };
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${GRPC_USAGE}`);
  return options;
}

/** `pnpm bench grpc …` (argv after the sub-command). */
export async function grpcMain(argv: string[]): Promise<void> {
  const options = parseGrpcCli(argv);
  if (options === 'help') {
    process.stdout.write(`${GRPC_USAGE}\n`);
    return;
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const namespace = `idemq-bench-grpc-${randomBytes(4).toString('hex')}`;
  const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const cleanUp = () => deleteKeys(admin, [`*${globEscape(namespace)}*`]).catch(() => 0);
  const interrupt = async () => {
    killChildren();
    await cleanUp();
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  const loadAtStart = (await import('node:os')).loadavg()[0] ?? Number.NaN;
  const startedAt = new Date();
  const command = ['pnpm bench', GRPC_COMMAND, ...argv].join(' ');
  try {
    const rows = await runGrpcBench({
      redisUrl,
      servers: options.servers,
      runs: options.runs,
      durationSeconds: options.durationSeconds,
      concurrency: options.concurrency,
      namespace,
      probeCalls: GRPC_BENCH_DEFAULTS.probe,
      log: (line) => process.stderr.write(`[bench] ${line}\n`),
    });
    const facts = await serverFacts(admin);
    const machine = describeMachine(
      machineFacts(loadAtStart),
      [`Redis ${facts.version} at ${redactUrl(redisUrl)}`],
      startedAt.toISOString(),
      Date.now() - startedAt.getTime(),
    );
    process.stdout.write(`\n${grpcMarkdown(rows, command, machine)}\n`);
    if (options.json) {
      await mkdir(dirname(options.json), { recursive: true });
      await writeFile(options.json, `${JSON.stringify({ command, machine, rows }, null, 2)}\n`);
    }
  } finally {
    await cleanUp();
    admin.disconnect();
  }
}
