import {
  parseServerBenchCli,
  type ServerBench,
  type ServerBenchOptions,
  serverBenchMain,
} from '../serverBench.js';
import { runHttpBench } from './run.js';
import { type HttpRow, httpMarkdown } from './summary.js';
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

/** `pnpm bench http`: its servers, load option and report, for the shared server bench. */
const httpBench: ServerBench<HttpServerName, HttpRow> = {
  command: HTTP_COMMAND,
  usage: HTTP_USAGE,
  servers: HTTP_SERVERS,
  isServerName: isHttpServerName,
  loadOption: 'connections',
  defaults: {
    runs: HTTP_BENCH_DEFAULTS.runs,
    duration: HTTP_BENCH_DEFAULTS.duration,
    load: HTTP_BENCH_DEFAULTS.connections,
  },
  run: ({ load, ...common }) =>
    runHttpBench({ ...common, connections: load, probeRequests: HTTP_BENCH_DEFAULTS.probe }),
  markdown: httpMarkdown,
};

/** The sub-command's options, every problem reported at once; `help` when usage was asked for. */
export function parseHttpCli(argv: string[]): ServerBenchOptions<HttpServerName> | 'help' {
  return parseServerBenchCli(httpBench, argv);
}

/** `pnpm bench http …` (argv after the sub-command). */
export function httpMain(argv: string[]): Promise<void> {
  return serverBenchMain(httpBench, argv);
}
