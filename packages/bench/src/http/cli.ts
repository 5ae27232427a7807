import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { positiveIntegerReader } from '../args.js';
import { killChildren } from '../children.js';
import { describeMachine, machineFacts, redactUrl } from '../machine.js';
import { deleteKeys, globEscape, serverFacts } from '../redisInfo.js';
import { runHttpBench } from './run.js';
import { httpMarkdown } from './summary.js';
import { HTTP_COMMAND, HTTP_SERVERS, type HttpServerName, isHttpServerName } from './types.js';

export const HTTP_BENCH_DEFAULTS = Object.freeze({
  runs: 3,
  duration: 5,
  connections: 64,
  probe: 50,
});

export const HTTP_USAGE = `Usage: pnpm bench http [options]
A no-op POST route bare and behind idempotency layers, all on the same Redis, loaded by
autocannon: requests/s, p50/p99, Redis round trips per new request and per replay, route runs
when 100 requests with one key arrive at once.
  --runs <n>          rounds per server, interleaved; figures are medians (default ${HTTP_BENCH_DEFAULTS.runs})
  --duration <s>      seconds per round (default ${HTTP_BENCH_DEFAULTS.duration})
  --connections <n>   autocannon connections (default ${HTTP_BENCH_DEFAULTS.connections})
  --only <names>      some of: ${HTTP_SERVERS.join(', ')}
  --json <file>       write the rows (every round) as JSON
Redis: REDIS_URL (default redis://127.0.0.1:6379); every key (the peer's are its
idempotency keys as sent) contains idemq-bench-http-<random>; they are deleted after the run.`;

export interface HttpCliOptions {
  runs: number;
  durationSeconds: number;
  connections: number;
  servers: HttpServerName[];
  json?: string;
}

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseHttpCli(argv: string[]): HttpCliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const problems: string[] = [];
  const positive = positiveIntegerReader(problems);
  const names = values.only?.split(',').map((n) => n.trim()) ?? [...HTTP_SERVERS];
  for (const name of names) {
    if (!isHttpServerName(name)) {
      problems.push(
        `--only: unknown server ${JSON.stringify(name)} (known: ${HTTP_SERVERS.join(', ')})`,
      );
    }
  }
  const options: HttpCliOptions = {
    runs: positive('runs', values.runs, HTTP_BENCH_DEFAULTS.runs),
    durationSeconds: positive('duration', values.duration, HTTP_BENCH_DEFAULTS.duration),
    connections: positive('connections', values.connections, HTTP_BENCH_DEFAULTS.connections),
    servers: HTTP_SERVERS.filter((s) => names.includes(s)),
    ...(values.json === undefined ? {} : { json: values.json }),
  };
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${HTTP_USAGE}`);
  return options;
}

/** `pnpm bench http …` (argv after the sub-command). */
export async function httpMain(argv: string[]): Promise<void> {
  const options = parseHttpCli(argv);
  if (options === 'help') {
    process.stdout.write(`${HTTP_USAGE}\n`);
    return;
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const namespace = `idemq-bench-http-${randomBytes(4).toString('hex')}`;
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
  const command = ['pnpm bench', HTTP_COMMAND, ...argv].join(' ');
  try {
    const rows = await runHttpBench({
      redisUrl,
      servers: options.servers,
      runs: options.runs,
      durationSeconds: options.durationSeconds,
      connections: options.connections,
      namespace,
      probeRequests: HTTP_BENCH_DEFAULTS.probe,
      log: (line) => process.stderr.write(`[bench] ${line}\n`),
    });
    const facts = await serverFacts(admin);
    const machine = describeMachine(
      machineFacts(loadAtStart),
      [`Redis ${facts.version} at ${redactUrl(redisUrl)}`],
      startedAt.toISOString(),
      Date.now() - startedAt.getTime(),
    );
    process.stdout.write(`\n${httpMarkdown(rows, command, machine)}\n`);
    if (options.json) {
      await mkdir(dirname(options.json), { recursive: true });
      await writeFile(options.json, `${JSON.stringify({ command, machine, rows }, null, 2)}\n`);
    }
  } finally {
    await cleanUp();
    admin.disconnect();
  }
}
