import { parseArgs } from 'node:util';
import { BENCH_DEFAULTS, type BenchOptions } from './bench.js';
import {
  CONTENDERS,
  type ContenderName,
  isContenderName,
  STORE,
  STORES,
  type StoreName,
} from './contenders/index.js';

export type CliOptions = BenchOptions & { json?: string; doc?: string; fromJson?: string };

/** The PostgreSQL the bench uses unless POSTGRES_URL names another (trust auth, as services start it). */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export const USAGE = `Usage: pnpm bench [options]
  --ids <n>              unique ids per round (default ${BENCH_DEFAULTS.ids}; 20 % more are sent as duplicates)
  --runs <n>             measured rounds; figures are their median (default ${BENCH_DEFAULTS.runs})
  --concurrency <list>   messages in flight, e.g. 1,64 (default ${BENCH_DEFAULTS.concurrency.join(',')})
  --only <names>         some of: ${CONTENDERS.join(', ')}
  --stores <names>       only the contenders of these stores: ${STORES.join(', ')} (default: both; the
                         PostgreSQL rows are left out, with a line saying why, when it does not answer)
  --quick                ${BENCH_DEFAULTS.quickIds} ids, ${BENCH_DEFAULTS.quickRuns} run (a smoke test)
  --json <file>          write the full report (every round) as JSON
  --doc <file>           fill the generated blocks (one per store) of a Markdown file (docs/performance.md)
  --from-json <file>     no run: print (and --doc) a report saved with --json
  --no-ceiling           skip redis-benchmark
  --no-pin               leave the servers and the bench on every CPU (default: a local Redis and
                         PostgreSQL are pinned to CPU 0 and the contenders to the others, with taskset)
  --inline               run contenders in this process instead of one child process each
Redis: REDIS_URL (default redis://127.0.0.1:6379). Only keys under a fresh idemq-bench:<id> namespace
are written, and they are deleted after each round.
PostgreSQL: POSTGRES_URL (default ${DEFAULT_POSTGRES_URL}). Each contender gets a table of its own,
idemq_bench_<id>_…, emptied after each round and dropped at the end.
Consumers on a broker: pnpm bench transports [rabbitmq|kafka|sqs] [options] (see pnpm bench transports --help).`;

/** The CLI's options, every problem reported at once; `help` when usage was asked for. */
export function parseCli(argv: string[]): CliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      ids: { type: 'string' },
      runs: { type: 'string' },
      concurrency: { type: 'string' },
      only: { type: 'string' },
      stores: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      doc: { type: 'string' },
      'from-json': { type: 'string' },
      'no-ceiling': { type: 'boolean', default: false },
      'no-pin': { type: 'boolean', default: false },
      inline: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const problems: string[] = [];
  const positive = positiveIntegerReader(problems);
  const ids = positive(
    'ids',
    values.ids,
    values.quick ? BENCH_DEFAULTS.quickIds : BENCH_DEFAULTS.ids,
  );
  const runs = positive(
    'runs',
    values.runs,
    values.quick ? BENCH_DEFAULTS.quickRuns : BENCH_DEFAULTS.runs,
  );
  const concurrency = (values.concurrency ?? BENCH_DEFAULTS.concurrency.join(','))
    .split(',')
    .map((c) => positive('concurrency', c.trim(), 1));
  const names = values.only?.split(',').map((n) => n.trim()) ?? [...CONTENDERS];
  const contenders: ContenderName[] = [];
  for (const name of names) {
    if (isContenderName(name)) contenders.push(name);
    else
      problems.push(
        `--only: unknown contender ${JSON.stringify(name)} (known: ${CONTENDERS.join(', ')})`,
      );
  }
  const storeNames = values.stores?.split(',').map((n) => n.trim()) ?? [...STORES];
  const stores: StoreName[] = [];
  for (const name of storeNames) {
    if ((STORES as readonly string[]).includes(name)) stores.push(name as StoreName);
    else
      problems.push(
        `--stores: unknown store ${JSON.stringify(name)} (known: ${STORES.join(', ')})`,
      );
  }
  const chosen = CONTENDERS.filter((c) => contenders.includes(c) && stores.includes(STORE[c]));
  if (problems.length === 0 && chosen.length === 0) {
    problems.push('--only and --stores leave no contender to run');
  }
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${USAGE}`);
  return {
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    postgresUrl: process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL,
    ids,
    runs,
    concurrency,
    // Table order, whatever order --only gave.
    contenders: chosen,
    // A run that names no contender or store takes PostgreSQL only when it answers.
    optionalStores: values.only === undefined && values.stores === undefined ? ['postgres'] : [],
    isolation: values.inline ? 'inline' : 'process',
    warmupIds: Math.min(ids, BENCH_DEFAULTS.quickIds),
    ceiling: !values['no-ceiling'],
    pin: !values['no-pin'],
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.doc === undefined ? {} : { doc: values.doc }),
    ...(values['from-json'] === undefined ? {} : { fromJson: values['from-json'] }),
  };
}

/** Reads `--name` as a positive integer (`fallback` when absent); a bad value is noted in `problems`. */
export function positiveIntegerReader(problems: string[]) {
  return (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) problems.push(`--${name} must be a positive integer`);
    return n;
  };
}
