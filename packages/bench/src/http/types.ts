/** The HTTP benchmark's servers and what each round asks of them. */

/** The sub-command of `pnpm bench` that runs the HTTP benchmark. */
export const HTTP_COMMAND = 'http';

/**
 * Servers in table order: the bare no-op route on node:http; idemq's node:http binding in front
 * of it; a hand-written `SET NX` middleware in front of it; idemq's fetch centre behind node:http
 * (the request made a WHATWG Request, the Response written back); the bare route on Fastify and
 * idemq's Fastify plugin; the bare route on Express; idemq's Express binding; express-idempotency
 * with its Redis adapter on Express.
 */
export const HTTP_SERVERS = [
  'bare',
  'idemq',
  'hand',
  'idemq-centre',
  'fastify',
  'idemq-fastify',
  'express',
  'idemq-express',
  'express-idempotency',
] as const;
export type HttpServerName = (typeof HTTP_SERVERS)[number];

export function isHttpServerName(name: string): name is HttpServerName {
  return (HTTP_SERVERS as readonly string[]).includes(name);
}

export const HTTP_SERVER_LABEL: Record<HttpServerName, string> = {
  bare: 'node:http, bare no-op route',
  idemq: 'node:http + @idemq/http/node + redisStore',
  hand: 'node:http + hand-written SET NX middleware',
  'idemq-centre': 'node:http + @idemq/http fetch centre + redisStore',
  fastify: 'Fastify 5, bare no-op route',
  'idemq-fastify': 'Fastify 5 + @idemq/http/fastify + redisStore',
  express: 'Express 5, bare no-op route',
  'idemq-express': 'Express 5 + @idemq/http/express + redisStore',
  'express-idempotency': 'Express 5 + express-idempotency + its Redis adapter',
};

/** Servers with idempotency, whose round trips and storms are measured. */
export const GUARDED: readonly HttpServerName[] = [
  'idemq',
  'hand',
  'idemq-centre',
  'idemq-fastify',
  'idemq-express',
  'express-idempotency',
];

export interface HttpServerInit {
  server: HttpServerName;
  redisUrl: string;
  /** Every Redis key the server writes lives under `<namespace>:`. */
  namespace: string;
}

/** What a server counted since the last reset. */
export interface ServerCounters {
  /** Times the no-op route ran. */
  routeRuns: number;
  /** Redis round trips its idempotency layer made (commands sent; a script call is one). */
  redisRoundTrips: number;
  /** CPU time (user + system) the server process spent, in µs. */
  cpuMicros: number;
  /** The port it listens on, 127.0.0.1. */
  port: number;
}
