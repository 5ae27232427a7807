import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import amqplib from 'amqplib';
import { Redis } from 'ioredis';
import { killChildren } from '../children.js';
import { deleteKeys } from '../redisInfo.js';
import { deleteSource } from './broker.js';
import {
  possibleSources,
  RABBITMQ_BENCH_DEFAULTS,
  type RabbitmqBenchOptions,
  runRabbitmqBench,
  type TransportReport,
  transportKeyPattern,
  transportNamespace,
} from './rabbitmq.js';
import { spliceTransportDocument, transportMarkdown, transportText } from './report.js';
import { TRANSPORTS, TRANSPORTS_COMMAND, type TransportName } from './types.js';

const D = RABBITMQ_BENCH_DEFAULTS;

export const TRANSPORTS_USAGE = `Usage: pnpm bench transports [rabbitmq] [options]
idemq's consumer (createConsumer + redisStore, no-op handler) beside a raw amqplib consumer with
the same prefetch, on the same pre-filled queues: messages/s, the ratio, Redis calls per message.
  --messages <n>              messages per round at prefetch > 1 (default ${D.messages})
  --sequential-messages <n>   messages per round at prefetch 1 (default ${D.sequentialMessages})
  --runs <n>                  rounds per consumer, alternating; figures are medians (default ${D.runs})
  --prefetch <list>           prefetch = idemq concurrency, e.g. 64,1 (default ${D.prefetch.join(',')})
  --queue-type <type>         quorum or classic (default ${D.queueType}, as rabbitmq())
  --warmup <n>                unmeasured messages per consumer first (default ${D.warmupMessages})
  --quick                     ${D.quickMessages} messages (${D.quickSequentialMessages} at prefetch 1), ${D.quickRuns} run (a smoke test)
  --json <file>               write the full report (every round) as JSON
  --doc <file>                fill the transports block of a Markdown file (docs/performance.md)
  --from-json <file>          no run: print (and --doc) a report saved with --json
  --inline                    run the consumers in this process instead of one child process each
AMQP_URL (default amqp://guest:guest@127.0.0.1:5672), REDIS_URL (default redis://127.0.0.1:6379).
Every queue and exchange is named idemq-bench-<random>.…, every Redis key idemq-bench-<random>:…;
all are deleted after each round and on Ctrl-C. IDEMQ_BENCH_CHILD_ARGS adds Node flags to the
consumer processes (e.g. --cpu-prof).`;

export type TransportsCliOptions = RabbitmqBenchOptions & {
  transport: TransportName;
  json?: string;
  doc?: string;
  fromJson?: string;
};

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseTransportsCli(argv: string[]): TransportsCliOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      messages: { type: 'string' },
      'sequential-messages': { type: 'string' },
      runs: { type: 'string' },
      prefetch: { type: 'string' },
      'queue-type': { type: 'string' },
      warmup: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      doc: { type: 'string' },
      'from-json': { type: 'string' },
      inline: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return 'help';
  const problems: string[] = [];
  const integer = (name: string, text: string | undefined, fallback: number, min = 1) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) problems.push(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const transport = positionals[0] ?? 'rabbitmq';
  if (!(TRANSPORTS as readonly string[]).includes(transport)) {
    problems.push(
      `unknown transport ${JSON.stringify(transport)} (known: ${TRANSPORTS.join(', ')})`,
    );
  }
  if (positionals.length > 1)
    problems.push(`one transport at a time, got ${positionals.join(' ')}`);
  const quick = values.quick;
  const messages = integer('messages', values.messages, quick ? D.quickMessages : D.messages);
  const sequentialMessages = integer(
    'sequential-messages',
    values['sequential-messages'],
    quick ? D.quickSequentialMessages : D.sequentialMessages,
  );
  const runs = integer('runs', values.runs, quick ? D.quickRuns : D.runs);
  const prefetch = (values.prefetch ?? D.prefetch.join(','))
    .split(',')
    .map((p) => integer('prefetch', p.trim(), 1));
  if (prefetch.some((p) => p > 65_535)) problems.push('--prefetch must be at most 65535');
  const queueType = values['queue-type'] ?? D.queueType;
  if (queueType !== 'quorum' && queueType !== 'classic') {
    problems.push('--queue-type must be quorum or classic');
  }
  const warmupMessages = integer(
    'warmup',
    values.warmup,
    Math.min(quick ? D.quickSequentialMessages : D.warmupMessages, messages),
    0,
  );
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${TRANSPORTS_USAGE}`);
  return {
    transport: transport as TransportName,
    amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    messages,
    sequentialMessages,
    runs,
    prefetch,
    queueType: queueType as 'quorum' | 'classic',
    warmupMessages,
    isolation: values.inline ? 'inline' : 'process',
    stallTimeoutMs: D.stallTimeoutMs,
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.doc === undefined ? {} : { doc: values.doc }),
    ...(values['from-json'] === undefined ? {} : { fromJson: values['from-json'] }),
  };
}

/** `pnpm bench transports …` (argv after the sub-command). */
export async function transportsMain(argv: string[]): Promise<void> {
  const options = parseTransportsCli(argv);
  if (options === 'help') {
    process.stdout.write(`${TRANSPORTS_USAGE}\n`);
    return;
  }
  const { json, doc, fromJson, transport: _transport, ...benchOptions } = options;
  if (fromJson) {
    const saved = JSON.parse(await readFile(fromJson, 'utf8')) as TransportReport & {
      command: string;
    };
    process.stdout.write(`${transportText(saved, saved.command)}\n`);
    if (doc) await fillDocument(doc, transportMarkdown(saved, saved.command));
    return;
  }
  const command = ['pnpm bench', TRANSPORTS_COMMAND, ...argv].join(' ');
  const namespace = transportNamespace();
  // Interrupted: end the consumers, then delete this run's queues, exchanges and keys.
  const interrupt = async (signal: NodeJS.Signals) => {
    process.stderr.write(`[bench] ${signal}: deleting ${namespace} queues and keys\n`);
    killChildren();
    await cleanUp(benchOptions, namespace).catch(() => undefined);
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const report = await runRabbitmqBench({
    ...benchOptions,
    namespace,
    log: (line) => process.stderr.write(`[bench] ${line}\n`),
  });
  process.stdout.write(`\n${transportText(report, command)}\n`);
  if (json) {
    await mkdir(dirname(json), { recursive: true });
    await writeFile(json, `${JSON.stringify({ command, ...report }, null, 2)}\n`);
    process.stderr.write(`[bench] wrote ${json}\n`);
  }
  if (doc) await fillDocument(doc, transportMarkdown(report, command));
}

async function fillDocument(file: string, markdown: string): Promise<void> {
  await writeFile(file, spliceTransportDocument(await readFile(file, 'utf8'), markdown));
  process.stderr.write(`[bench] updated ${file}\n`);
}

/**
 * After an interrupted run: deletes the queues and exchanges of every round this run can have
 * declared (deleting a missing one is not an error) and its Redis keys.
 */
async function cleanUp(options: RabbitmqBenchOptions, namespace: string): Promise<void> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  await deleteKeys(redis, [transportKeyPattern(namespace)]).catch(() => 0);
  redis.disconnect();
  const connection = await amqplib.connect(options.amqpUrl);
  try {
    const channel = await connection.createChannel();
    for (const source of possibleSources(namespace, options)) await deleteSource(channel, source);
    await channel.close();
  } finally {
    await connection.close().catch(() => undefined);
  }
}
