import {
  parseServerBenchCli,
  type ServerBench,
  type ServerBenchOptions,
  serverBenchMain,
} from '../serverBench.js';
import { runGrpcBench } from './run.js';
import { type GrpcRow, grpcMarkdown } from './summary.js';
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

/** `pnpm bench grpc`: its servers, load option and report, for the shared server bench. */
const grpcBench: ServerBench<GrpcServerName, GrpcRow> = {
  command: GRPC_COMMAND,
  usage: GRPC_USAGE,
  servers: GRPC_SERVERS,
  isServerName: isGrpcServerName,
  loadOption: 'concurrency',
  defaults: {
    runs: GRPC_BENCH_DEFAULTS.runs,
    duration: GRPC_BENCH_DEFAULTS.duration,
    load: GRPC_BENCH_DEFAULTS.concurrency,
  },
  run: ({ load, ...common }) =>
    runGrpcBench({ ...common, concurrency: load, probeCalls: GRPC_BENCH_DEFAULTS.probe }),
  markdown: grpcMarkdown,
};

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseGrpcCli(argv: string[]): ServerBenchOptions<GrpcServerName> | 'help' {
  return parseServerBenchCli(grpcBench, argv);
}

/** `pnpm bench grpc …` (argv after the sub-command). */
export function grpcMain(argv: string[]): Promise<void> {
  return serverBenchMain(grpcBench, argv);
}
