import { uuidv7 } from '@idemq/core';
import { OptionsCheck } from '@idemq/core/adapter';
import type { KeyFormat } from './keyHeader.js';

/** A function with `fetch`'s signature. */
export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/** What `onRetry` is told before each wait. */
export interface RetryEvent {
  /** The header value every attempt of this call carries. */
  idempotencyKey: string;
  method: string;
  url: string;
  /** The attempt that just failed (1-based). */
  attempt: number;
  /** The wait before the next attempt. */
  delayMs: number;
  /** The status that is retried, when the attempt got a response. */
  status?: number;
  /** The error that is retried, when the attempt got no response. */
  error?: unknown;
}

export interface IdempotentFetchOptions {
  /** The fetch that sends each attempt. @default globalThis.fetch */
  fetch?: FetchFunction;
  /** Methods that get a key and are retried; others are passed to `fetch` untouched. @default ['POST', 'PATCH'] */
  methods?: readonly string[];
  /** @default 'Idempotency-Key' */
  headerName?: string;
  /** `'token'` (bare, as Stripe's clients send it) or `'sf-string'` (quoted, as the IETF draft). @default 'token' */
  keyFormat?: KeyFormat;
  /** Makes the key of each call that does not carry the header already. @default uuidv7 */
  generateKey?: () => string;
  /** Attempts per call, the first included. @default 5 */
  maxAttempts?: number;
  /** @default 250 */
  baseDelayMs?: number;
  /** Cap of the backoff between attempts. @default 5000 */
  maxDelayMs?: number;
  /** Cap of the wait a `Retry-After` header can ask for. @default 60000 */
  maxRetryAfterMs?: number;
  /** Time for a whole call, waits included; none when unset. */
  deadlineMs?: number;
  /** Time for one attempt to get its response headers; an attempt over it is retried. None when unset. */
  attemptTimeoutMs?: number;
  /** Which statuses are retried. @default 409, 429 and every 5xx */
  retryOn?: (status: number) => boolean;
  /** Largest body buffered for replay. @default 16 MiB */
  maxBodyBytes?: number;
  /** Called before each wait (logging, metrics). An error it throws ends the call. */
  onRetry?: (event: RetryEvent) => void;
}

export const IDEMPOTENT_FETCH_DEFAULTS = Object.freeze({
  methods: Object.freeze(['POST', 'PATCH']) as readonly string[],
  headerName: 'Idempotency-Key',
  keyFormat: 'token' as KeyFormat,
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
  maxBodyBytes: 16 * 1024 * 1024,
});

/** 409 (the key is still in flight), 429 and 5xx; never any other 4xx. */
export function defaultRetryOn(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

export interface ResolvedOptions {
  fetch: FetchFunction;
  methods: ReadonlySet<string>;
  headerName: string;
  keyFormat: KeyFormat;
  generateKey: () => string;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  deadlineMs: number | undefined;
  attemptTimeoutMs: number | undefined;
  retryOn: (status: number) => boolean;
  maxBodyBytes: number;
  onRetry: ((event: RetryEvent) => void) | undefined;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const ONE_DAY_MS = 86_400_000;

/** Checks the options, reporting every problem at once, and fills in the defaults. */
export function resolveOptions(options: IdempotentFetchOptions = {}): ResolvedOptions {
  const check = new OptionsCheck('idempotentFetch');
  check
    .fn('fetch', options.fetch, true)
    .expect(
      options.fetch !== undefined || typeof globalThis.fetch === 'function',
      'fetch must be given: this runtime has no globalThis.fetch',
    )
    .expect(
      options.methods === undefined ||
        (Array.isArray(options.methods) &&
          options.methods.every((m) => typeof m === 'string' && HEADER_NAME.test(m))),
      'methods must be an array of method names',
    )
    .expect(
      options.headerName === undefined ||
        (typeof options.headerName === 'string' && HEADER_NAME.test(options.headerName)),
      'headerName must be an HTTP header name',
    )
    .oneOf('keyFormat', options.keyFormat, ['token', 'sf-string'])
    .fn('generateKey', options.generateKey, true)
    .integer('maxAttempts', options.maxAttempts, 1, 100)
    .integer('baseDelayMs', options.baseDelayMs, 0, ONE_DAY_MS)
    .integer('maxDelayMs', options.maxDelayMs, 0, ONE_DAY_MS)
    .integer('maxRetryAfterMs', options.maxRetryAfterMs, 0, ONE_DAY_MS)
    .integer('deadlineMs', options.deadlineMs, 1, ONE_DAY_MS)
    .integer('attemptTimeoutMs', options.attemptTimeoutMs, 1, ONE_DAY_MS)
    .fn('retryOn', options.retryOn, true)
    .integer('maxBodyBytes', options.maxBodyBytes, 0)
    .fn('onRetry', options.onRetry, true)
    .done();
  const d = IDEMPOTENT_FETCH_DEFAULTS;
  return {
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    methods: new Set((options.methods ?? d.methods).map((m) => m.toUpperCase())),
    headerName: options.headerName ?? d.headerName,
    keyFormat: options.keyFormat ?? d.keyFormat,
    generateKey: options.generateKey ?? (() => uuidv7()),
    maxAttempts: options.maxAttempts ?? d.maxAttempts,
    baseDelayMs: options.baseDelayMs ?? d.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? d.maxDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? d.maxRetryAfterMs,
    deadlineMs: options.deadlineMs,
    attemptTimeoutMs: options.attemptTimeoutMs,
    retryOn: options.retryOn ?? defaultRetryOn,
    maxBodyBytes: options.maxBodyBytes ?? d.maxBodyBytes,
    onRetry: options.onRetry,
  };
}
