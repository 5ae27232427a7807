#!/usr/bin/env node
/**
 * `pnpm demo`: parses the command line, runs the scenario with a progress display, prints the
 * summary. Exit codes: 0 every invariant held, 1 an invariant failed (or the run crashed),
 * 2 bad arguments, 130 interrupted.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomSeed } from '@idemq/core/testing';
import { storeNames, transportNames, UnsupportedAdapterError } from './adapters.js';
import { FAULT_DEFAULTS } from './faults.js';
import {
  GRPC_SCENARIO_DEFAULTS,
  type GrpcScenarioOptions,
  runGrpcScenario,
} from './grpc/grpcScenario.js';
import { formatGrpcJson, formatGrpcSummary, grpcViolations } from './grpc/grpcSummary.js';
import {
  HTTP_SCENARIO_DEFAULTS,
  type HttpScenarioOptions,
  runHttpScenario,
} from './http/httpScenario.js';
import { formatHttpJson, formatHttpSummary, httpViolations } from './http/httpSummary.js';
import { type ProgressStream, startProgress } from './progress.js';
import { createScenario, SCENARIO_DEFAULTS, type ScenarioOptions } from './scenario.js';
import { formatJson, formatSummary, violations } from './summary.js';

/** Process exit codes of the demo. */
export const ExitCodes = Object.freeze({
  ok: 0,
  invariantViolated: 1,
  usage: 2,
  interrupted: 130,
});

/** A bad command line; the message says what to change. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where the CLI writes; injectable so tests need no child process. */
export interface CliIo {
  stdout: ProgressStream;
  stderr: { write(chunk: string): unknown };
  /** Aborting ends the run early, as Ctrl-C does. */
  signal?: AbortSignal;
}

/** A parsed command line. */
export type CliCommand =
  | { kind: 'help' }
  | { kind: 'run'; json: boolean; scenario: Omit<ScenarioOptions, 'signal'> }
  | { kind: 'http'; json: boolean; scenario: Omit<HttpScenarioOptions, 'signal'> }
  | { kind: 'grpc'; json: boolean; scenario: Omit<GrpcScenarioOptions, 'signal'> };

/** A transport that is not a broker: a payments API over HTTP and retrying clients. */
export const HTTP_TRANSPORT = 'http';
/** The same over gRPC: a unary method behind @idemq/grpc's interceptor, clients with deadlines. */
export const GRPC_TRANSPORT = 'grpc';
/** Stores whose story is the brokers' one: their ledger is a table the handler writes. */
const BROKER_ONLY_STORES: readonly string[] = ['postgres'];

/** Help text, printed by `--help`. */
export const HELP = `Usage: pnpm demo [options]

Publishes payments with duplicates, transient failures and poison messages, processes them with
several idemq consumers and checks that every payment was charged exactly once.
By default it runs in memory: no broker, no Redis, nothing to install. With --transport
or --store it runs on the real services (pnpm services:up starts them).

Options:
  --messages <n>       unique payments to publish (default ${SCENARIO_DEFAULTS.messages})
  --duplicates <f>     share of payments sent twice, 0..1 or a percentage such as 25%
                       (default ${SCENARIO_DEFAULTS.duplicates}); half right after the original,
                       half once the original has completed
  --consumers <n>      consumers sharing the work, 1..64 (default ${SCENARIO_DEFAULTS.consumers})
  --seed <n>           seed of the fault plan (5 % transient failures, 1 % poison);
                       the same seed meets the same faults (default: random, printed)
  --timeout-ms <n>     give up after this long; unsettled payments count as lost
                       (default ${SCENARIO_DEFAULTS.timeoutMs})
  --transport <name>   broker: ${transportNames.join(', ')} (default ${SCENARIO_DEFAULTS.transport}),
                       or http: a payments API (POST /payments, Idempotency-Key) and clients
                       that time out and retry with the same key; there --messages is the
                       payments (default ${HTTP_SCENARIO_DEFAULTS.payments}) and --consumers the clients
                       (default ${HTTP_SCENARIO_DEFAULTS.clients}), --duplicates does not apply;
                       or grpc: the same payments API as a unary gRPC method (idempotency-key
                       metadata) whose clients' deadlines expire, plus transient UNAVAILABLE
                       failures; the same options as http (defaults ${GRPC_SCENARIO_DEFAULTS.payments} payments,
                       ${GRPC_SCENARIO_DEFAULTS.clients} clients)
  --store <name>       idempotency store: ${storeNames.join(', ')} (default ${SCENARIO_DEFAULTS.store});
                       postgres keeps the ledger in PostgreSQL too (POSTGRES_URL, default
                       127.0.0.1:5432): each charge is a row written in the transaction that
                       marks its payment completed, and for ${FAULT_DEFAULTS.killRate * 100} % of the payments the
                       first run's connection is killed after that INSERT; with the brokers
                       only (not http, grpc)
  --json               print the figures as JSON on stdout (progress goes to stderr)
  -h, --help           show this help

Exit codes: 0 all invariants held, 1 a payment was processed twice or lost (or the run
failed), 2 bad arguments, 130 interrupted.
`;

/** Parses argv (without `node` and the script); throws `UsageError` on anything wrong. */
export function parseCli(argv: readonly string[]): CliCommand {
  // `pnpm demo -- --messages 10` passes the separator through; it is not a positional.
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(args).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return { kind: 'help' };

  const transport = values.transport ?? SCENARIO_DEFAULTS.transport;
  const store = values.store ?? SCENARIO_DEFAULTS.store;
  if (!storeNames.includes(store)) {
    throw new UsageError(new UnsupportedAdapterError('store', store, storeNames).message);
  }
  if (transport === HTTP_TRANSPORT || transport === GRPC_TRANSPORT) {
    if (values.duplicates !== undefined) {
      throw new UsageError(
        `--duplicates does not apply to --transport ${transport}: every retry is one`,
      );
    }
    if (BROKER_ONLY_STORES.includes(store)) {
      throw new UsageError(
        `--store ${store} runs with the brokers (its ledger is a table the handler writes in ` +
          `the run's transaction); with --transport ${transport} choose memory or redis`,
      );
    }
    const defaults = transport === HTTP_TRANSPORT ? HTTP_SCENARIO_DEFAULTS : GRPC_SCENARIO_DEFAULTS;
    return {
      kind: transport,
      json: values.json ?? false,
      scenario: {
        payments: integer('--messages', values.messages, defaults.payments, 1, 1_000_000),
        clients: integer('--consumers', values.consumers, defaults.clients, 1, 256),
        seed: integer('--seed', values.seed, randomSeed(), 0, 0xffff_ffff),
        timeoutMs: integer(
          '--timeout-ms',
          values['timeout-ms'],
          SCENARIO_DEFAULTS.timeoutMs,
          1,
          86_400_000,
        ),
        store,
      },
    };
  }
  if (!transportNames.includes(transport)) {
    throw new UsageError(
      new UnsupportedAdapterError('transport', transport, [
        ...transportNames,
        HTTP_TRANSPORT,
        GRPC_TRANSPORT,
      ]).message,
    );
  }
  return {
    kind: 'run',
    json: values.json ?? false,
    scenario: {
      messages: integer('--messages', values.messages, SCENARIO_DEFAULTS.messages, 1, 1_000_000),
      duplicates: fraction('--duplicates', values.duplicates, SCENARIO_DEFAULTS.duplicates),
      consumers: integer('--consumers', values.consumers, SCENARIO_DEFAULTS.consumers, 1, 64),
      seed: integer('--seed', values.seed, randomSeed(), 0, 0xffff_ffff),
      timeoutMs: integer(
        '--timeout-ms',
        values['timeout-ms'],
        SCENARIO_DEFAULTS.timeoutMs,
        1,
        86_400_000,
      ),
      transport,
      store,
    },
  };
}

/** Runs the CLI; resolves to the exit code instead of exiting, so tests can call it. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`error: ${error.message}\nRun with --help for the options.\n`);
    return ExitCodes.usage;
  }
  if (command.kind === 'help') {
    io.stdout.write(HELP);
    return ExitCodes.ok;
  }

  if (command.kind === 'http') {
    const { scenario } = command;
    return runApi(command.json, io, (signal) => runHttpScenario({ ...scenario, ...signal }), {
      summary: formatHttpSummary,
      json: formatHttpJson,
      violations: httpViolations,
    });
  }
  if (command.kind === 'grpc') {
    const { scenario } = command;
    return runApi(command.json, io, (signal) => runGrpcScenario({ ...scenario, ...signal }), {
      summary: formatGrpcSummary,
      json: formatGrpcJson,
      violations: grpcViolations,
    });
  }

  // With --json, stdout carries only the JSON document.
  const progressStream = command.json ? (io.stderr as ProgressStream) : io.stdout;
  const scenario = createScenario({
    ...command.scenario,
    ...(io.signal === undefined ? {} : { signal: io.signal }),
  });
  const progress = startProgress({ stream: progressStream, snapshot: scenario.snapshot });
  let figures: Awaited<ReturnType<typeof scenario.run>>;
  try {
    figures = await scenario.run();
  } catch (error) {
    progress.stop();
    io.stderr.write(`error: the demo failed: ${describeError(error)}\n`);
    return ExitCodes.invariantViolated;
  }
  progress.stop();

  io.stdout.write(`${command.json ? formatJson(figures) : formatSummary(figures)}\n`);
  if (figures.interrupted) return ExitCodes.interrupted;
  return violations(figures).length === 0 ? ExitCodes.ok : ExitCodes.invariantViolated;
}

/** How a payments API run (http, grpc) is reported. */
interface ApiReport<Figures> {
  summary(figures: Figures): string;
  json(figures: Figures): string;
  violations(figures: Figures): string[];
}

/** `--transport http|grpc`: no progress bar (the run takes seconds), the transport's summary. */
async function runApi<Figures extends { interrupted: boolean }>(
  json: boolean,
  io: CliIo,
  run: (signal: { signal?: AbortSignal }) => Promise<Figures>,
  report: ApiReport<Figures>,
): Promise<number> {
  let figures: Figures;
  try {
    figures = await run(io.signal === undefined ? {} : { signal: io.signal });
  } catch (error) {
    io.stderr.write(`error: the demo failed: ${describeError(error)}\n`);
    return ExitCodes.invariantViolated;
  }
  io.stdout.write(`${json ? report.json(figures) : report.summary(figures)}\n`);
  if (figures.interrupted) return ExitCodes.interrupted;
  return report.violations(figures).length === 0 ? ExitCodes.ok : ExitCodes.invariantViolated;
}

function parse(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      messages: { type: 'string' },
      duplicates: { type: 'string' },
      consumers: { type: 'string' },
      seed: { type: 'string' },
      'timeout-ms': { type: 'string' },
      transport: { type: 'string' },
      store: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function integer(
  flag: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text.replaceAll('_', '')) ? Number(text.replaceAll('_', '')) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(
      `${flag} must be a whole number from ${min} to ${max.toLocaleString('en-US')}, got '${text}'`,
    );
  }
  return value;
}

function fraction(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const percent = text.endsWith('%');
  const body = percent ? text.slice(0, -1) : text;
  const value = /^\d+(\.\d+)?$|^\.\d+$/.test(body) ? Number(body) / (percent ? 100 : 1) : NaN;
  if (!(value >= 0 && value <= 1)) {
    throw new UsageError(`${flag} must be a fraction from 0 to 1 (or 0% to 100%), got '${text}'`);
  }
  return value;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/** True when this file is the program node was asked to run (not imported by a test). */
function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  const controller = new AbortController();
  process.once('SIGINT', () => {
    controller.abort();
    // A second Ctrl-C means now.
    process.once('SIGINT', () => process.exit(ExitCodes.interrupted));
  });
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${describeError(error)}\n`);
      process.exitCode = ExitCodes.invariantViolated;
    },
  );
}
