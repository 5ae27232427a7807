/** The gRPC benchmark's servers, its load client, and what each round asks of them. */
import type { KeyMode } from '../serverBench.js';

/** The sub-command of `pnpm bench` that runs the gRPC benchmark. */
export const GRPC_COMMAND = 'grpc';

/**
 * Servers in table order, each serving the same trivial unary `Charge` on grpc-js: bare; behind
 * `@idemq/grpc`'s `idempotencyInterceptor` with `redisStore`; behind a hand-written `SET NX`
 * server interceptor on ioredis.
 */
export const GRPC_SERVERS = ['bare', 'idemq', 'hand'] as const;
export type GrpcServerName = (typeof GRPC_SERVERS)[number];

export function isGrpcServerName(name: string): name is GrpcServerName {
  return (GRPC_SERVERS as readonly string[]).includes(name);
}

export const GRPC_SERVER_LABEL: Record<GrpcServerName, string> = {
  bare: 'grpc-js, bare Charge',
  idemq: 'grpc-js + @idemq/grpc interceptor + redisStore',
  hand: 'grpc-js + hand-written SET NX interceptor',
};

/** Servers with idempotency, whose round trips, replays and storms are measured. */
export const GUARDED: readonly GrpcServerName[] = ['idemq', 'hand'];

export interface GrpcServerInit {
  server: GrpcServerName;
  redisUrl: string;
  /** Every Redis key the server writes lives under `<namespace>:`. */
  namespace: string;
}

/** What a server counted since the last reset. */
export interface ServerCounters {
  /** Times the `Charge` handler ran. */
  handlerRuns: number;
  /** Redis round trips its idempotency layer made (commands sent; a script call is one). */
  redisRoundTrips: number;
  /** CPU time (user + system) the server process spent, in µs. */
  cpuMicros: number;
  /** The port it listens on, 127.0.0.1. */
  port: number;
}

/** The one key of a replay load tagged `tag`. */
export function replayedKey(tag: string): string {
  return `${tag}-replayed`;
}

/** Asked of the load client: a timed load, or a list of calls (sequential or all at once). */
export type ClientRequest =
  | {
      kind: 'load';
      port: number;
      mode: KeyMode;
      /** Calls kept in flight. */
      concurrency: number;
      seconds: number;
      /** Keys are `<tag>-<n>` (new) or `replayedKey(tag)` (replay, completed beforehand). */
      tag: string;
    }
  | { kind: 'calls'; port: number; keys: string[]; atOnce: boolean };

/** What a timed load measured on the client side. */
export interface ClientLoad {
  calls: number;
  durationMs: number;
  p50Ms: number;
  p99Ms: number;
  /** Calls that ended with a status other than OK. */
  nonOk: number;
}

/** What a list of calls got back. */
export interface ClientCalls {
  /** Status code of each call, in order. */
  codes: number[];
  /** Calls answered with `idempotent-replayed: true` initial metadata. */
  replayed: number;
}

export type ClientResult = ClientLoad | ClientCalls;
