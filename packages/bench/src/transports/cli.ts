import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureServices } from '@idemq/services';
import { Redis } from 'ioredis';
import { killChildren } from '../children.js';
import { deleteKeys } from '../redisInfo.js';
import { openBroker } from './broker.js';
import { spliceTransportDocument, transportText } from './report.js';
import {
  possibleSources,
  runTransportBench,
  TRANSPORT_BENCH_DEFAULTS,
  type TransportBenchOptions,
  type TransportReport,
  transportKeyPattern,
  transportNamespace,
} from './run.js';
import {
  CONSUMERS,
  type ConsumerName,
  DEFAULT_CONSUMERS,
  type Endpoints,
  isConsumerName,
  isTransportName,
  TRANSPORTS,
  TRANSPORTS_COMMAND,
  type TransportName,
  type TransportSettings,
} from './types.js';

const D = TRANSPORT_BENCH_DEFAULTS;

export const TRANSPORTS_USAGE = `Usage: pnpm bench transports [${TRANSPORTS.join('|')} …] [options]
idemq's consumer (createConsumer + redisStore, no-op handler) beside a raw consumer of the same
client library with the same concurrency, and that raw consumer with hand-written idempotency
(SET NX before the handler, SET after), on the same pre-filled queues or topics: messages/s,
the ratio, Redis round trips per message, CPU and RSS. Default: every transport, in turn.
  --messages <n>              messages per round at concurrency > 1 (default ${D.messages})
  --sequential-messages <n>   messages per round at concurrency 1 (default ${D.sequentialMessages})
  --runs <n>                  rounds per consumer, alternating; figures are medians (default ${D.runs})
  --concurrency <list>        e.g. 64,1 (default rabbitmq ${D.concurrency.rabbitmq.join(',')}, kafka ${D.concurrency.kafka.join(',')}, sqs ${D.concurrency.sqs.join(',')});
                              RabbitMQ prefetch = idemq concurrency; --prefetch is the same option
  --queue-type <type>         rabbitmq: quorum or classic (default ${D.queueType}, as rabbitmq())
  --partitions <n>            kafka: partitions per topic (default ${D.partitions})
  --warmup <n>                unmeasured messages per consumer first (default ${D.warmupMessages})
  --consumers <list>          some of ${CONSUMERS.join(', ')} (default ${DEFAULT_CONSUMERS.join(',')}); raw always runs.
                              Floors, to locate a gap: store = raw + redisStore claim and complete
                              (no engine, no adapter); claim = raw + redisStore claim only
  --quick                     ${D.quickMessages} messages (${D.quickSequentialMessages} at concurrency 1), ${D.quickRuns} run (a smoke test)
  --json <file>               write the full reports (every round) as JSON
  --doc <file>                fill each transport's block of a Markdown file (docs/performance.md)
  --from-json <file>          no run: print (and --doc) reports saved with --json
  --inline                    run the consumers in this process instead of one child process each
Services are started when missing (@idemq/services); REDIS_URL, AMQP_URL, KAFKA_BROKERS,
SQS_ENDPOINT and AWS_REGION point elsewhere. Every queue, topic and consumer group is named
idemq-bench-<random>-…, every Redis key idemq-bench-<random>:…; all are deleted after each
round and on Ctrl-C. IDEMQ_BENCH_CHILD_ARGS adds Node flags to the consumer processes
(e.g. --cpu-prof).`;

/** What the sub-command runs: the transports in turn, each with its own options. */
export interface TransportsCliOptions {
  transports: TransportName[];
  /** Everything but the endpoints, the transport and its concurrency default. */
  common: Omit<TransportBenchOptions, 'transport' | 'endpoints' | 'concurrency'>;
  /** Given with --concurrency / --prefetch; otherwise each transport's default. */
  concurrency?: number[];
  json?: string;
  doc?: string;
  fromJson?: string;
}

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseTransportsCli(argv: string[]): TransportsCliOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      messages: { type: 'string' },
      'sequential-messages': { type: 'string' },
      runs: { type: 'string' },
      concurrency: { type: 'string' },
      prefetch: { type: 'string' },
      'queue-type': { type: 'string' },
      partitions: { type: 'string' },
      warmup: { type: 'string' },
      consumers: { type: 'string' },
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
  const transports: TransportName[] = [];
  for (const name of positionals) {
    if (!isTransportName(name)) {
      problems.push(`unknown transport ${JSON.stringify(name)} (known: ${TRANSPORTS.join(', ')})`);
    } else if (!transports.includes(name)) transports.push(name);
  }
  const quick = values.quick;
  const messages = integer('messages', values.messages, quick ? D.quickMessages : D.messages);
  const sequentialMessages = integer(
    'sequential-messages',
    values['sequential-messages'],
    quick ? D.quickSequentialMessages : D.sequentialMessages,
  );
  const runs = integer('runs', values.runs, quick ? D.quickRuns : D.runs);
  if (values.concurrency !== undefined && values.prefetch !== undefined) {
    problems.push('--concurrency and --prefetch are the same option: give one');
  }
  const list = values.concurrency ?? values.prefetch;
  const concurrency = list?.split(',').map((c) => integer('concurrency', c.trim(), 1));
  if (concurrency?.some((c) => c > 65_535)) problems.push('--concurrency must be at most 65535');
  const queueType = values['queue-type'] ?? D.queueType;
  if (queueType !== 'quorum' && queueType !== 'classic') {
    problems.push('--queue-type must be quorum or classic');
  }
  const partitions = integer('partitions', values.partitions, D.partitions);
  const warmupMessages = integer(
    'warmup',
    values.warmup,
    Math.min(quick ? D.quickSequentialMessages : D.warmupMessages, messages),
    0,
  );
  const consumers: ConsumerName[] = ['raw'];
  for (const name of (values.consumers?.split(',') ?? DEFAULT_CONSUMERS).map((c) => c.trim())) {
    if (!isConsumerName(name)) {
      problems.push(`unknown consumer ${JSON.stringify(name)} (known: ${CONSUMERS.join(', ')})`);
    } else if (!consumers.includes(name)) consumers.push(name);
  }
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\n\n${TRANSPORTS_USAGE}`);
  const settings: TransportSettings = {
    queueType: queueType as TransportSettings['queueType'],
    partitions,
    sqsWaitTimeMs: D.sqsWaitTimeMs,
  };
  return {
    transports: TRANSPORTS.filter((t) => transports.length === 0 || transports.includes(t)),
    common: {
      settings,
      messages,
      sequentialMessages,
      runs,
      consumers,
      warmupMessages,
      isolation: values.inline ? 'inline' : 'process',
      stallTimeoutMs: D.stallTimeoutMs,
    },
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.doc === undefined ? {} : { doc: values.doc }),
    ...(values['from-json'] === undefined ? {} : { fromJson: values['from-json'] }),
  };
}

/** What `--json` writes: the command and one report per transport. */
interface SavedReports {
  command: string;
  reports: TransportReport[];
}

/** `pnpm bench transports …` (argv after the sub-command). */
export async function transportsMain(argv: string[]): Promise<void> {
  const options = parseTransportsCli(argv);
  if (options === 'help') {
    process.stdout.write(`${TRANSPORTS_USAGE}\n`);
    return;
  }
  if (options.fromJson) {
    const saved = JSON.parse(await readFile(options.fromJson, 'utf8')) as SavedReports;
    for (const report of saved.reports) {
      process.stdout.write(`${transportText(report, saved.command)}\n\n`);
    }
    if (options.doc) await fillDocument(options.doc, saved);
    return;
  }
  const command = ['pnpm bench', TRANSPORTS_COMMAND, ...argv].join(' ');
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const endpoints = await startServices(options.transports);
  const saved: SavedReports = { command, reports: [] };
  for (const transport of options.transports) {
    const run: TransportBenchOptions = {
      ...options.common,
      transport,
      endpoints,
      concurrency: options.concurrency ?? [...D.concurrency[transport]],
      namespace: transportNamespace(),
      log,
    };
    const report = await withCleanUpOnSignal(run, () => runTransportBench(run));
    process.stdout.write(`\n${transportText(report, command)}\n`);
    saved.reports.push(report);
    // Written after each transport, so a later failure keeps what was measured.
    if (options.json) await writeJson(options.json, saved);
    if (options.doc) await fillDocument(options.doc, { command, reports: [report] });
  }
}

/** Starts what the transports need (and Redis) unless it answers already; their addresses. */
async function startServices(transports: readonly TransportName[]): Promise<Endpoints> {
  const urls = await ensureServices(['redis', ...transports]);
  return {
    redisUrl: urls.redis,
    amqpUrl: urls.amqp,
    kafkaBrokers: urls.kafkaBrokers,
    sqsEndpoint: urls.sqsEndpoint,
    sqsRegion: urls.sqsRegion,
  };
}

/**
 * Runs `bench`; interrupted (Ctrl-C, SIGTERM), it ends the consumers, then deletes every source
 * the run can have created and its Redis keys before leaving.
 */
async function withCleanUpOnSignal<T>(
  options: TransportBenchOptions,
  bench: () => Promise<T>,
): Promise<T> {
  const namespace = options.namespace as string;
  const interrupt = async (signal: NodeJS.Signals) => {
    process.stderr.write(`[bench] ${signal}: deleting ${namespace} sources and keys\n`);
    killChildren();
    await cleanUp(options, namespace).catch(() => undefined);
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    return await bench();
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

/** Deletes the sources of every round a run can have created (a missing one is no error). */
async function cleanUp(options: TransportBenchOptions, namespace: string): Promise<void> {
  const redis = new Redis(options.endpoints.redisUrl, { maxRetriesPerRequest: 1 });
  await deleteKeys(redis, [transportKeyPattern(namespace)]).catch(() => 0);
  redis.disconnect();
  const broker = await openBroker(options.transport, options.endpoints, options.settings);
  try {
    for (const source of possibleSources(namespace, options)) {
      await broker.remove(source).catch(() => 0);
    }
  } finally {
    await broker.close().catch(() => undefined);
  }
}

async function writeJson(file: string, saved: SavedReports): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(saved, null, 2)}\n`);
  process.stderr.write(`[bench] wrote ${file}\n`);
}

async function fillDocument(file: string, saved: SavedReports): Promise<void> {
  let document = await readFile(file, 'utf8');
  for (const report of saved.reports) {
    document = spliceTransportDocument(document, report, saved.command);
  }
  await writeFile(file, document);
  process.stderr.write(`[bench] updated ${file}\n`);
}
