import {
  createIdempotency,
  ErrorCodes,
  type HandlerContext,
  type Idempotency,
  isIdemqError,
  type RunOutcome,
} from '@idemq/core';
import { envelopeSerializer } from './envelopeSerializer.js';
import { parseIdempotencyKey } from './key.js';
import { type HttpSettings, resolveHttpSettings } from './options.js';
import { type ProblemSlug, retryAfterSeconds } from './problems.js';
import { isStoredResponse, type StoredResponse } from './responseEnvelope.js';
import { recordScope } from './scope.js';
import type { HttpContext, HttpIdempotencyOptions } from './types.js';

/** `Retry-After` on 503 when the store is down: it gives no better hint. */
const STORE_DOWN_RETRY_AFTER_MS = 1_000;

/** Never aborted: the signal of a request that passed through has no lease to lose. */
const NO_LEASE_SIGNAL = new AbortController().signal;

/** The context of a request that passed through: no key, no record. */
const PASS_THROUGH_CONTEXT: HttpContext = Object.freeze({
  idempotencyKey: undefined,
  fencingToken: undefined,
  attempt: undefined,
  signal: NO_LEASE_SIGNAL,
});

/** The route's answer read for storing: what the store keeps and what its client gets. */
export interface CapturedAnswer<Answer> {
  stored: StoredResponse;
  forClient: Answer;
}

/**
 * What the guard needs of one representation of HTTP (WHATWG Request/Response, node:http): how
 * to read a request and how to make, read and replay an answer. Everything else is shared.
 */
export interface HttpFront<Req, Answer> {
  method(request: Req): string;
  /** The value of a request header, `null` when absent; `name` is given in lower case. */
  header(request: Req, name: string): string | null;
  /** The path, the default route. */
  path(request: Req): string;
  /** Path and query as sent, which the default fingerprint covers. */
  target(request: Req): string;
  /** Reads the body once; the route then gets `forwarded`, which still has it. */
  readBody(request: Req): Promise<{ bytes: Uint8Array; forwarded: Req }>;
  /** Reads the route's answer up to `maxBytes` for storing, keeping what its client gets. */
  capture(answer: Answer, settings: HttpSettings<Req>): Promise<CapturedAnswer<Answer>>;
  problem(slug: ProblemSlug, detail: string, headers?: Readonly<Record<string, string>>): Answer;
  /** The replay of a stored response, or of a record that kept none (`undefined`). */
  replay(stored: StoredResponse | undefined): Answer;
}

/** Produces the route's answer for the (possibly rebuilt) request. */
export type GuardNext<Req, Answer> = (request: Req, ctx: HttpContext) => Promise<Answer>;

/** One front's request handler: the route runs once per key, retries get the first answer. */
export type Guard<Req, Answer> = (request: Req, next: GuardNext<Req, Answer>) => Promise<Answer>;

/**
 * Thrown out of run()'s fn for an answer that must not be stored (5xx by default), so that the
 * record is FAILED and a retry runs again; it carries the answer its client still gets.
 */
class UnstoredAnswer<Answer> extends Error {
  constructor(
    readonly answer: Answer,
    status: number,
  ) {
    super(`the route answered ${status}, which is not stored`);
    this.name = 'UnstoredAnswer';
  }
}

/** What one request's run produced, kept beside run() since its outcome may drop it. */
interface Produced<Answer> {
  /** The answer for this request's client, once the route answered. */
  answer?: Answer;
  /** What the route threw, when it threw. */
  thrown?: unknown;
}

/** Checks the options, makes the engine and returns the handler of one front. */
export function createGuard<Req, Answer>(
  options: HttpIdempotencyOptions<Req>,
  front: HttpFront<Req, Answer>,
  caller?: string,
): Guard<Req, Answer> {
  const settings = resolveHttpSettings(options, front, caller);
  const engine = createIdempotency({
    store: options.store,
    scope: settings.scope,
    storeResults: true,
    serializer: envelopeSerializer,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.ttlMs === undefined ? {} : { completedTtlMs: options.ttlMs }),
    ...(options.inProgressRetryMaxDelayMs === undefined
      ? {}
      : { inProgressRetryMaxDelayMs: options.inProgressRetryMaxDelayMs }),
    onStoreError: options.onStoreError === 'process' ? 'process' : 'retry',
  });
  return (request, next) => guard(settings, engine, front, request, next);
}

async function guard<Req, Answer>(
  settings: HttpSettings<Req>,
  engine: Idempotency,
  front: HttpFront<Req, Answer>,
  request: Req,
  next: GuardNext<Req, Answer>,
): Promise<Answer> {
  const method = front.method(request);
  if (!settings.methods.has(method.toUpperCase())) return next(request, PASS_THROUGH_CONTEXT);
  const parsed = parseIdempotencyKey(
    front.header(request, settings.headerNameLower),
    settings.maxKeyLength,
  );
  if (parsed.kind === 'missing') {
    if (!settings.required) return next(request, PASS_THROUGH_CONTEXT);
    return front.problem('key-missing', `${method} requests need an ${settings.headerName} header`);
  }
  if (parsed.kind === 'malformed') {
    return front.problem('key-malformed', `${settings.headerName}: ${parsed.reason}`);
  }
  const key = parsed.key;

  const route = settings.route(request);
  const principal = await settings.principal?.(request);
  // The body is read once for the fingerprint; the route gets the same bytes.
  const { bytes, forwarded } = await front.readBody(request);
  const payload = await settings.fingerprint(request, bytes);
  const scope = recordScope(settings.scope, route, principal);

  const produced: Produced<Answer> = {};
  const fn = (ctx: HandlerContext) =>
    runRoute(settings, front, forwarded, next, key, ctx, produced);
  let outcome: RunOutcome<StoredResponse>;
  try {
    outcome = await engine.run(key, fn, { payload, scope });
  } catch (error) {
    return answerRunError(front, error, produced);
  }
  switch (outcome.status) {
    case 'processed':
      return produced.answer ?? handlerFailed(front);
    case 'duplicate':
      // A result this package did not write replays as a record that kept no response.
      return front.replay(isStoredResponse(outcome.result) ? outcome.result : undefined);
    case 'in-progress':
      return front.problem(
        'in-progress',
        'A request with this idempotency key is still being processed; retry after the delay',
        { 'retry-after': retryAfterSeconds(outcome.retryAfterMs) },
      );
    case 'key-reuse':
      return front.problem(
        'key-reuse',
        'This idempotency key was first used for another request (method, path, query or body)',
      );
    case 'lease-lost':
      // The route ran but another process took the key over: this client still gets its answer.
      return produced.answer ?? handlerFailed(front);
  }
}

/** run()'s fn: the route, its answer read for storing, and the client's answer kept aside. */
async function runRoute<Req, Answer>(
  settings: HttpSettings<Req>,
  front: HttpFront<Req, Answer>,
  request: Req,
  next: GuardNext<Req, Answer>,
  key: string,
  ctx: HandlerContext,
  produced: Produced<Answer>,
): Promise<StoredResponse> {
  const httpContext: HttpContext = {
    idempotencyKey: key,
    fencingToken: ctx.fencingToken,
    attempt: ctx.attempt,
    signal: ctx.signal,
  };
  let answer: Answer;
  try {
    answer = await next(request, httpContext);
  } catch (thrown) {
    produced.thrown = thrown;
    throw thrown;
  }
  const { stored, forClient } = await front.capture(answer, settings);
  produced.answer = forClient;
  if (!settings.storeStatus(stored.status)) throw new UnstoredAnswer(forClient, stored.status);
  return stored;
}

/** The answer when run() rejected: the route's own answer when it produced one. */
function answerRunError<Req, Answer>(
  front: HttpFront<Req, Answer>,
  error: unknown,
  produced: Produced<Answer>,
): Answer {
  if (error instanceof UnstoredAnswer) return error.answer as Answer;
  // The route answered but its completion could not be recorded: its client still gets it.
  if (produced.answer !== undefined) return produced.answer;
  if ('thrown' in produced) return handlerFailed(front);
  if (isIdemqError(error)) {
    if (error.code === ErrorCodes.STORE_UNAVAILABLE) {
      return front.problem(
        'store-unavailable',
        'The idempotency store cannot be reached; retry after the delay',
        { 'retry-after': retryAfterSeconds(STORE_DOWN_RETRY_AFTER_MS) },
      );
    }
    if (error.code === ErrorCodes.STORE_REJECTED) {
      return front.problem('store-rejected', 'The idempotency store refused this record');
    }
    if (
      error.code === ErrorCodes.REQUEST_ID_INVALID ||
      error.code === ErrorCodes.REQUEST_ID_TOO_LONG
    ) {
      return front.problem('key-malformed', error.message);
    }
  }
  throw error;
}

function handlerFailed<Req, Answer>(front: HttpFront<Req, Answer>): Answer {
  return front.problem(
    'handler-failed',
    'The route failed; retrying with the same key runs it again',
  );
}
