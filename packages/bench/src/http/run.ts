/**
 * `pnpm bench http`: each server in its own child process, loaded in turn by autocannon (in this
 * process) round after round, so that drift on the machine touches every server alike; then the
 * probes (round trips per new request and per replay, the duplicate storm) on the quiet server.
 */
import autocannon from 'autocannon';
import {
  benchVariants,
  closeServerSessions,
  interleavedRounds,
  type KeyMode,
  openServerSessions,
  type ServerSession,
} from '../serverBench.js';
import { type HttpRow, type LoadRound, perRequest, summarizeRounds } from './summary.js';
import { GUARDED, type HttpServerName, type ServerCounters } from './types.js';

export interface HttpBenchOptions {
  redisUrl: string;
  servers: HttpServerName[];
  runs: number;
  durationSeconds: number;
  connections: number;
  namespace: string;
  /** Sequential requests of each round-trip probe. */
  probeRequests: number;
  log: (line: string) => void;
}

type Server = ServerSession<ServerCounters>;

const BODY = JSON.stringify({ amount: 1 });

export async function runHttpBench(options: HttpBenchOptions): Promise<HttpRow[]> {
  const servers = await openServerSessions<HttpServerName, ServerCounters>(
    new URL('./worker.js', import.meta.url),
    options.servers,
    options.redisUrl,
    options.namespace,
  );
  try {
    // Replays are loaded on the two whose replay path is the comparison; the peers' are not.
    const variants = benchVariants(options.servers, ['idemq', 'hand']);
    const rounds = await interleavedRounds({
      variants,
      runs: options.runs,
      durationSeconds: options.durationSeconds,
      namespace: options.namespace,
      load: ([name, mode], seconds, tag) =>
        load(servers.get(name)!, mode, options.connections, seconds, tag),
      describe: (round) => `${Math.round(round.requestsPerSecond)} req/s, p99 ${round.p99Ms} ms`,
      log: options.log,
    });
    const rows: HttpRow[] = [];
    for (const [index, [name, mode]] of variants.entries()) {
      const row = summarizeRounds(name, mode, options.connections, rounds[index] ?? []);
      if (mode === 'new' && GUARDED.includes(name)) {
        row.probe = await probe(
          servers.get(name)!,
          options.probeRequests,
          `${options.namespace}-${name}`,
        );
      }
      rows.push(row);
    }
    return rows;
  } finally {
    await closeServerSessions(servers);
  }
}

/**
 * One autocannon load: each request a new key, or one key (completed first) repeated; the
 * server's CPU time is read over the load alone.
 */
async function load(
  { session, port }: Server,
  mode: KeyMode,
  connections: number,
  seconds: number,
  tag: string,
): Promise<LoadRound> {
  const url = `http://127.0.0.1:${port}/pay`;
  const headers = { 'content-type': 'application/json' };
  const fixedKey = `"${tag}-replayed"`;
  if (mode === 'replay') await post(url, fixedKey);
  await session.round({ reset: true });
  let sequence = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers,
    body: BODY,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          headers: {
            ...request.headers,
            'idempotency-key': mode === 'replay' ? fixedKey : `"${tag}-${sequence++}"`,
          },
        }),
      },
    ],
  });
  const { cpuMicros } = await session.round({ reset: true });
  return {
    serverCpuUsPerRequest: cpuMicros / Math.max(1, result.requests.total),
    requestsPerSecond: result.requests.total / (result.duration || seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Round trips per new request and per replay (sequential), then 100 concurrent same-key requests. */
async function probe({ session, port }: Server, requests: number, name: string) {
  const url = `http://127.0.0.1:${port}/pay`;
  await session.round({ reset: true });
  for (let i = 0; i < requests; i++) await post(url, `"probe-new-${name}-${i}"`);
  const afterNew = await session.round({ reset: true });
  const replayKey = `"probe-replay-${name}"`;
  await post(url, replayKey);
  await session.round({ reset: true });
  for (let i = 0; i < requests; i++) await post(url, replayKey);
  const afterReplay = await session.round({ reset: true });
  const stormKey = `"probe-storm-${name}"`;
  const stormRequests = 100;
  await Promise.all(Array.from({ length: stormRequests }, () => post(url, stormKey)));
  const afterStorm = await session.round({ reset: true });
  return {
    roundTripsPerNew: perRequest(0, afterNew.redisRoundTrips, requests),
    roundTripsPerReplay: perRequest(0, afterReplay.redisRoundTrips, requests),
    stormRouteRuns: afterStorm.routeRuns,
    stormRequests,
  };
}

/** One POST; 0 when the connection failed (a peer that breaks under the storm is a finding). */
async function post(url: string, key: string): Promise<number> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: BODY,
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
