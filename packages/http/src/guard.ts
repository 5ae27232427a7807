import type { HandlerContext } from '@idemq/core';
import {
  createResponseGuard,
  type ProducedResponse,
  type Refusal,
  type RefusalKind,
  type ResponseFront,
  type ResponseGuard,
  requestScope,
} from '@idemq/core/adapter';
import { parseIdempotencyKey } from './key.js';
import { type HttpSettings, resolveHttpSettings } from './options.js';
import { type ProblemSlug, retryAfterSeconds } from './problems.js';
import type { StoredResponse } from './responseEnvelope.js';
import type { HttpContext, HttpIdempotencyOptions } from './types.js';

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

/** HTTP's wording where core's is protocol-neutral. */
const HTTP_DETAILS: Partial<Record<RefusalKind, string>> = {
  'key-reuse':
    'This idempotency key was first used for another request (method, path, query or body)',
  'handler-failed': 'The route failed; retrying with the same key runs it again',
};

/** Checks the options, makes the engine and returns the handler of one front. */
export function createGuard<Req, Answer>(
  options: HttpIdempotencyOptions<Req>,
  front: HttpFront<Req, Answer>,
  caller?: string,
): Guard<Req, Answer> {
  const settings = resolveHttpSettings(options, front, caller);
  const responseGuard = createResponseGuard({ ...options, scope: settings.scope });
  const answers: ResponseFront<Answer> = {
    refuse: (refusal) => refuse(front, refusal),
    replay: (stored) => front.replay(stored),
  };
  return (request, next) => guard(settings, responseGuard, front, answers, request, next);
}

async function guard<Req, Answer>(
  settings: HttpSettings<Req>,
  responseGuard: ResponseGuard,
  front: HttpFront<Req, Answer>,
  answers: ResponseFront<Answer>,
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
  // An await costs a turn of the event loop: none without a principal hook.
  const principal = settings.principal ? await settings.principal(request) : undefined;
  // The body is read once for the fingerprint; the route gets the same bytes.
  const { bytes, forwarded } = await front.readBody(request);
  const fingerprint = settings.fingerprint(request, bytes);
  const payload = fingerprint instanceof Promise ? await fingerprint : fingerprint;
  return responseGuard(
    {
      key,
      scope: requestScope(settings.scope, route, principal),
      payload,
      produce: (ctx) => runRoute(settings, front, forwarded, next, key, ctx),
    },
    answers,
  );
}

/** The route, its answer read for storing, and the client's copy. */
async function runRoute<Req, Answer>(
  settings: HttpSettings<Req>,
  front: HttpFront<Req, Answer>,
  request: Req,
  next: GuardNext<Req, Answer>,
  key: string,
  ctx: HandlerContext,
): Promise<ProducedResponse<Answer>> {
  const httpContext: HttpContext = {
    idempotencyKey: key,
    fencingToken: ctx.fencingToken,
    attempt: ctx.attempt,
    signal: ctx.signal,
    transaction: ctx.transaction,
  };
  const answer = await next(request, httpContext);
  const { stored, forClient } = await front.capture(answer, settings);
  return { stored, answer: forClient, storable: settings.storeStatus(stored.status) };
}

/** A refusal as a problem answer; `Retry-After` in whole seconds when core gave a delay. */
function refuse<Req, Answer>(front: HttpFront<Req, Answer>, refusal: Refusal): Answer {
  const detail = HTTP_DETAILS[refusal.kind] ?? refusal.detail;
  return refusal.retryAfterMs === undefined
    ? front.problem(refusal.kind, detail)
    : front.problem(refusal.kind, detail, {
        'retry-after': retryAfterSeconds(refusal.retryAfterMs),
      });
}
