import { memoryStore, type Store } from '@idemq/core';
import { expect } from 'vitest';
import { uniqueName } from '../names.js';
import { Resources } from '../resources.js';
import type { CaseEnv } from '../suite.js';
import type { HttpHarness, HttpRoute, HttpSuiteOptions, ResolvedHttpTiming } from './harness.js';

/** The header every replay carries and no first response does. */
export const REPLAYED = 'idempotent-replayed';

/** The options a case sets, besides the store and scope the environment provides. */
export type CaseOptions = Omit<HttpSuiteOptions, 'store' | 'scope'> & { store?: Store };

/** One HTTP case's environment: a unique scope and keys, and the servers and stores it opened. */
export class HttpEnv implements CaseEnv {
  readonly scope = uniqueName('http');
  private readonly resources = new Resources();
  private nextKey = 0;

  constructor(
    readonly harness: HttpHarness,
    readonly timing: ResolvedHttpTiming,
  ) {}

  /** A new store from the harness (default `memoryStore()`), closed when the case ends. */
  async store(): Promise<Store> {
    const store = this.harness.createStore ? await this.harness.createStore() : memoryStore();
    this.resources.defer('store', () => store.close());
    return store;
  }

  /**
   * Serves `route` behind the binding's middleware on a new store (unless `options.store` is
   * given); returns the URL of the route.
   */
  async serve(route: HttpRoute, options: CaseOptions = {}): Promise<string> {
    const store = options.store ?? (await this.store());
    const server = await this.harness.start({
      options: { ...options, store, scope: this.scope },
      route,
    });
    this.resources.defer('server', () => server.close());
    return `${server.url}/r`;
  }

  /** A key no other request of any case uses. */
  key(label = 'key'): string {
    this.nextKey += 1;
    return `${label}-${this.nextKey}-${this.scope}`;
  }

  /** Registers a cleanup step. */
  defer(what: string, close: () => unknown): void {
    this.resources.defer(what, close);
  }

  dispose(): Promise<void> {
    return this.resources.dispose();
  }
}

/** A request to `url` with an Idempotency-Key header as given (quote it for the SF form). */
export function send(
  url: string,
  key: string | undefined,
  init: { method?: string; body?: RequestInit['body']; headers?: Record<string, string> } = {},
): Promise<Response> {
  const method = init.method ?? 'POST';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...init.headers,
    },
    body: hasBody ? (init.body ?? '{"amount":10}') : null,
  });
}

/** The body of `response`, as bytes. */
export async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Asserts `response` is an RFC 9457 problem of `status` whose type names `slug`
 * (`…#http-<slug>`), and reads its body.
 */
export async function expectProblem(
  response: Response,
  status: number,
  slug: string,
  what: string,
): Promise<void> {
  const text = await response.text();
  expect(response.status, `${what}: status (body ${text})`).toBe(status);
  expect(response.headers.get('content-type'), `${what}: content-type`).toMatch(
    /^application\/problem\+json/,
  );
  const problem = JSON.parse(text) as { type?: unknown; status?: unknown; title?: unknown };
  expect(problem.status, `${what}: problem status`).toBe(status);
  expect(typeof problem.title, `${what}: problem title`).toBe('string');
  expect(String(problem.type), `${what}: problem type`).toMatch(new RegExp(`#http-${slug}$`));
}

/** Counts the route's runs, optionally holding each until `release` resolves. */
export class RouteCounter {
  runs = 0;
  finished = 0;
  readonly contexts: Array<{ fencingToken: number | undefined; attempt: number | undefined }> = [];
  private startedWaiters: Array<() => void> = [];

  /** Records a run's start; resolves `started()` waiters. */
  start(ctx: { fencingToken: number | undefined; attempt: number | undefined }): void {
    this.runs += 1;
    this.contexts.push({ fencingToken: ctx.fencingToken, attempt: ctx.attempt });
    for (const wake of this.startedWaiters.splice(0)) wake();
  }

  /** Resolves once the route has started `count` runs. */
  async started(count = 1): Promise<void> {
    while (this.runs < count) {
      await new Promise<void>((resolve) => this.startedWaiters.push(resolve));
    }
  }
}

/** `promise`, or a rejection naming `what` once `ms` passed: a wait that must not hang the case. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
