/**
 * `pnpm bench grpc`: each server in its own child process, loaded in turn by the load client (a
 * child process too) round after round, so that drift on the machine touches every server alike;
 * then the probes (round trips per new call and per replay, the duplicate storm) on the quiet
 * server.
 */

import { childSession, type SessionHandle } from '../childSession.js';
import {
  benchVariants,
  closeServerSessions,
  interleavedRounds,
  type KeyMode,
  openServerSessions,
  type ServerSession,
} from '../serverBench.js';
import { type GrpcRow, type LoadRound, perCall, summarizeRounds } from './summary.js';
import {
  type ClientCalls,
  type ClientLoad,
  type ClientRequest,
  type ClientResult,
  type GrpcServerName,
  GUARDED,
  replayedKey,
  type ServerCounters,
} from './types.js';

export interface GrpcBenchOptions {
  redisUrl: string;
  servers: GrpcServerName[];
  runs: number;
  durationSeconds: number;
  /** Calls the load client keeps in flight. */
  concurrency: number;
  namespace: string;
  /** Sequential calls of each round-trip probe. */
  probeCalls: number;
  log: (line: string) => void;
}

type Server = ServerSession<ServerCounters>;
type LoadClient = SessionHandle<ClientRequest, ClientResult, { maxRssBytes: number }>;

export async function runGrpcBench(options: GrpcBenchOptions): Promise<GrpcRow[]> {
  const servers = await openServerSessions<GrpcServerName, ServerCounters>(
    new URL('./worker.js', import.meta.url),
    options.servers,
    options.redisUrl,
    options.namespace,
  );
  let client: LoadClient | undefined;
  try {
    client = await childSession<
      Record<string, never>,
      ClientRequest,
      ClientResult,
      { maxRssBytes: number }
    >(new URL('./clientWorker.js', import.meta.url), {});
    const loader = client;
    const variants = benchVariants(options.servers, GUARDED);
    const rounds = await interleavedRounds({
      variants,
      runs: options.runs,
      durationSeconds: options.durationSeconds,
      namespace: options.namespace,
      load: ([name, mode], seconds, tag) =>
        load(loader, servers.get(name)!, mode, options.concurrency, seconds, tag),
      describe: (round) =>
        `${Math.round(round.callsPerSecond)} calls/s, ` +
        `${Math.round(round.serverCpuUsPerCall)} µs CPU/call, p99 ${round.p99Ms.toFixed(1)} ms`,
      log: options.log,
    });
    const rows: GrpcRow[] = [];
    for (const [index, [name, mode]] of variants.entries()) {
      const row = summarizeRounds(name, mode, options.concurrency, rounds[index] ?? []);
      if (mode === 'new' && GUARDED.includes(name)) {
        row.probe = await probe(
          client,
          servers.get(name)!,
          options.probeCalls,
          `${options.namespace}-${name}`,
        );
      }
      rows.push(row);
    }
    return rows;
  } finally {
    await client?.close().catch(() => undefined);
    await closeServerSessions(servers);
  }
}

/**
 * One timed load: each call a new key, or one key (completed first) repeated; the server's CPU
 * time is read over the load alone.
 */
async function load(
  client: LoadClient,
  { session, port }: Server,
  mode: KeyMode,
  concurrency: number,
  seconds: number,
  tag: string,
): Promise<LoadRound> {
  if (mode === 'replay') await calls(client, port, [replayedKey(tag)], false);
  await session.round({ reset: true });
  const result = (await client.round({
    kind: 'load',
    port,
    mode,
    concurrency,
    seconds,
    tag,
  })) as ClientLoad;
  const { cpuMicros } = await session.round({ reset: true });
  return {
    serverCpuUsPerCall: cpuMicros / Math.max(1, result.calls),
    callsPerSecond: result.calls / ((result.durationMs || seconds * 1000) / 1000),
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    nonOk: result.nonOk,
  };
}

/** Round trips per new call and per replay (sequential), then 100 concurrent same-key calls. */
async function probe(
  client: LoadClient,
  { session, port }: Server,
  probeCalls: number,
  name: string,
) {
  await session.round({ reset: true });
  await calls(
    client,
    port,
    Array.from({ length: probeCalls }, (_, i) => `probe-new-${name}-${i}`),
    false,
  );
  const afterNew = await session.round({ reset: true });
  const replayKey = `probe-replay-${name}`;
  await calls(client, port, [replayKey], false);
  await session.round({ reset: true });
  const replays = await calls(client, port, Array(probeCalls).fill(replayKey), false);
  const afterReplay = await session.round({ reset: true });
  const stormCalls = 100;
  await calls(client, port, Array(stormCalls).fill(`probe-storm-${name}`), true);
  const afterStorm = await session.round({ reset: true });
  return {
    roundTripsPerNew: perCall(0, afterNew.redisRoundTrips, probeCalls),
    roundTripsPerReplay: perCall(0, afterReplay.redisRoundTrips, probeCalls),
    replaysMarked: replays.replayed,
    replayCalls: probeCalls,
    stormHandlerRuns: afterStorm.handlerRuns,
    stormCalls,
  };
}

function calls(client: LoadClient, port: number, keys: string[], atOnce: boolean) {
  return client.round({ kind: 'calls', port, keys, atOnce }) as Promise<ClientCalls>;
}
