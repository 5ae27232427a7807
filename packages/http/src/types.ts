import type { HandlerTransaction, Store } from '@idemq/core';

/** Produces the route's Response for the (possibly rebuilt) request. */
export type HttpNext = (request: Request, ctx: HttpContext) => Promise<Response>;

/** What the route sees of the idempotency record. */
export interface HttpContext {
  /** The key; `undefined` when the request passed through (method not covered, optional key). */
  idempotencyKey: string | undefined;
  /** Strictly increasing per key: pass it to conditional writes downstream. 0 when run unclaimed. */
  fencingToken: number | undefined;
  /** 1 on the first run of a key, +1 after each failed one. */
  attempt: number | undefined;
  /** Aborted when the lease is lost (never by the client disconnecting). */
  signal: AbortSignal;
  /**
   * With a transactional store (`@idemq/postgres` with `transactions`): the transaction the
   * completion commits in; write the route's effects through it.
   */
  transaction?: HandlerTransaction;
}

export interface HttpIdempotency {
  /** Takes a WHATWG Request; `next` produces the route's Response; returns the Response to send. */
  handle(request: Request, next: HttpNext): Promise<Response>;
}

/**
 * The options of every front. `Req` is what the hooks receive: a WHATWG `Request` for the centre,
 * Hono, Express and Fastify, node's `IncomingMessage` for `@idemq/http/node`.
 */
export interface HttpIdempotencyOptions<Req = Request> {
  store: Store;
  /** Namespace of the records, before the route and principal. @default 'http' */
  scope?: string;
  /** A covered method without a key gets 400; `false` passes it through. @default true */
  required?: boolean;
  /** Methods that need a key; others pass through untouched. @default ['POST', 'PATCH'] */
  methods?: readonly string[];
  /** @default 'Idempotency-Key' */
  headerName?: string;
  /** Longest key, in characters. @default 255 */
  maxKeyLength?: number;
  /** The route part of the scope. @default the URL pathname (bindings pass the route pattern) */
  route?: (request: Req) => string;
  /** The tenant part of the scope (API key, account): one tenant never replays another's. */
  principal?: (request: Req) => string | undefined | Promise<string | undefined>;
  /**
   * What makes two requests with one key "the same". `request`'s body is already read: use
   * `body`. @default SHA-256 of method, path and query, and body bytes
   */
  fingerprint?: (request: Req, body: Uint8Array) => string | Promise<string>;
  /** Response headers a replay repeats, besides the defaults (`DEFAULT_REPLAY_HEADERS`). */
  replayHeaders?: readonly string[];
  /** Which statuses are stored and replayed; the others leave the record FAILED. @default status < 500 */
  storeStatus?: (status: number) => boolean;
  /** How long a claim holds before another process may take it over. @default 40000 */
  leaseMs?: number;
  /** How long a completed key is replayed (its expiry). @default 86400000 (24 h) */
  ttlMs?: number;
  /** Longest `Retry-After` advised on 409, in ms. @default 5000 */
  inProgressRetryMaxDelayMs?: number;
  /** Store down: `'fail'` answers 503; `'process'` runs the route without idempotency. @default 'fail' */
  onStoreError?: 'fail' | 'process';
  /**
   * Largest body stored for replays, in bytes; a larger (or streamed past it) response is sent
   * whole to its client and replayed without body. Keep it below the store's `maxResultBytes`
   * (base64 counts 4/3) minus the headers. @default 46080 (fits the default 64 KiB limit)
   */
  maxResponseBytes?: number;
}
