import type { Store } from '@idemq/core';

/**
 * The options of an idempotency middleware that the HTTP suite sets, typed structurally so that
 * this package needs no HTTP binding: `@idemq/http`'s options accept every value of this type.
 */
export interface HttpSuiteOptions {
  store: Store;
  /** A namespace no other case uses. */
  scope: string;
  leaseMs?: number;
  ttlMs?: number;
  inProgressRetryMaxDelayMs?: number;
  required?: boolean;
  methods?: readonly string[];
  principal?: (request: Request) => string | undefined;
  replayHeaders?: readonly string[];
  maxResponseBytes?: number;
  onStoreError?: 'fail' | 'process';
}

/** What the suite's route reads of the idempotency record (the binding's context). */
export interface HttpRouteContext {
  /** `undefined` when the request passed through. */
  fencingToken: number | undefined;
  attempt: number | undefined;
  /** Aborted when the lease is lost. */
  signal: AbortSignal;
}

/** A fetch-style route the suite writes; the harness mounts it behind the middleware. */
export type HttpRoute = (request: Request, ctx: HttpRouteContext) => Promise<Response>;

/** What `HttpHarness.start` serves. */
export interface HttpServerSetup {
  options: HttpSuiteOptions;
  route: HttpRoute;
}

/** A server the harness started; the suite sends its requests to `${url}/r`. */
export interface HttpServer {
  /** Base URL, without a trailing slash: `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * What a server process started by `HttpHarness.startProcess` serves: the binding's middleware
 * with these options and a store that outlives the process (Redis, say) in front of
 * `processRoute(route)` from `@idemq/conformance/http-process` at `/r`, for every method.
 */
export interface HttpProcessSetup {
  /** Processes started with the same scope share their records, as instances of one API do. */
  options: { scope: string; leaseMs: number };
  route: ProcessRouteSetup;
}

/** The route of a server process: counted in a file, so the count survives a SIGKILL. */
export interface ProcessRouteSetup {
  /** Each run appends `start <pid>` when it begins and `end <pid>` before it answers. */
  countFile: string;
  /** How long a run holds between the two lines. */
  holdMs: number;
}

/** A server running in a child process. */
export interface HttpProcess {
  /** Base URL, without a trailing slash. */
  url: string;
  /** SIGKILLs the process; resolves once it exited. */
  kill(): Promise<void>;
  /** Stops the process gracefully (or ends it); resolves once it exited. */
  close(): Promise<void>;
}

/**
 * What `runHttpConformance` needs to exercise one HTTP binding of idemq (the fetch centre, a
 * framework middleware).
 */
export interface HttpHarness {
  /** Shown in the `describe` title, e.g. `fetch centre (redis store)`. */
  name: string;
  /**
   * Serves `setup.route` at path `/r` for GET, HEAD, POST, PUT, PATCH and DELETE, behind the
   * binding's idempotency middleware created with `setup.options`, on 127.0.0.1. The suite
   * closes what it gets.
   */
  start(setup: HttpServerSetup): Promise<HttpServer>;
  /** The store a case's middleware uses; the suite closes it. @default `memoryStore()` */
  createStore?(): Promise<Store>;
  /** A store that cannot reach its server, for H14; without it H14 is omitted. */
  createUnreachableStore?(): Promise<Store>;
  /**
   * Starts the binding's server in a child process (see `HttpProcessSetup`), for H08 (a server
   * SIGKILLed mid-route); without it H08 is omitted.
   */
  startProcess?(setup: HttpProcessSetup): Promise<HttpProcess>;
  /** Which cases this run registers, by id (`H01`…). @default every case */
  cases?: (id: string) => boolean;
  timing?: HttpTiming;
}

/** Durations the HTTP suite uses. */
export interface HttpTiming {
  /** Longest wait for a response or a file line. @default 10000 */
  waitMs?: number;
  /** Per-case timeout handed to vitest. @default 30000 */
  caseTimeoutMs?: number;
}

export type ResolvedHttpTiming = Required<HttpTiming>;

export const HTTP_TIMING_DEFAULTS: ResolvedHttpTiming = Object.freeze({
  waitMs: 10_000,
  caseTimeoutMs: 30_000,
});
