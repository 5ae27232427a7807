import {
  createIdempotency,
  ErrorCodes,
  type HandlerContext,
  type Idempotency,
  isIdemqError,
  type RunOutcome,
} from '@idemq/core';
import { parseIdempotencyKey } from './key.js';
import { type HttpSettings, resolveHttpSettings } from './options.js';
import { problemResponse, retryAfterSeconds } from './problems.js';
import { replayableHeaders } from './replayHeaders.js';
import { readBodyUpTo } from './responseBody.js';
import {
  BODY_OMITTED_HEADER,
  bodyBytes,
  bodyFor,
  isStoredResponse,
  REPLAYED_HEADER,
  replayResponse,
  type StoredResponse,
} from './responseEnvelope.js';
import { recordScope } from './scope.js';
import type { HttpContext, HttpIdempotency, HttpIdempotencyOptions, HttpNext } from './types.js';

/** `Retry-After` on 503 when the store is down: it gives no better hint. */
const STORE_DOWN_RETRY_AFTER_MS = 1_000;

/** Never aborted: the signal of a request that passed through has no lease to lose. */
const NO_LEASE_SIGNAL = new AbortController().signal;

/**
 * Thrown out of run()'s fn for a response that must not be stored (5xx by default), so that the
 * record is FAILED and a retry runs again; it carries the response its client still gets.
 */
class UnstoredResponse extends Error {
  constructor(readonly response: Response) {
    super(`the route answered ${response.status}, which is not stored`);
    this.name = 'UnstoredResponse';
  }
}

/** What one request's run produced, kept beside run() since its outcome may drop it. */
interface Produced {
  /** The response for this request's client, once the route answered. */
  response?: Response;
  /** What the route threw, when it threw. */
  thrown?: unknown;
}

/**
 * The framework-free centre: makes a route run once per `Idempotency-Key` and answers every
 * retry with the first response (see the package README for the status codes).
 */
export function createHttpIdempotency(options: HttpIdempotencyOptions): HttpIdempotency {
  const settings = resolveHttpSettings(options);
  const engine = createIdempotency({
    store: options.store,
    scope: settings.scope,
    storeResults: true,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.ttlMs === undefined ? {} : { completedTtlMs: options.ttlMs }),
    ...(options.inProgressRetryMaxDelayMs === undefined
      ? {}
      : { inProgressRetryMaxDelayMs: options.inProgressRetryMaxDelayMs }),
    onStoreError: options.onStoreError === 'process' ? 'process' : 'retry',
  });
  return { handle: (request, next) => handle(settings, engine, request, next) };
}

async function handle(
  settings: HttpSettings,
  engine: Idempotency,
  request: Request,
  next: HttpNext,
): Promise<Response> {
  if (!settings.methods.has(request.method.toUpperCase())) return passThrough(request, next);
  const parsed = parseIdempotencyKey(
    request.headers.get(settings.headerName),
    settings.maxKeyLength,
  );
  if (parsed.kind === 'missing') {
    if (!settings.required) return passThrough(request, next);
    return problemResponse(
      'key-missing',
      `${request.method} requests need an ${settings.headerName} header`,
    );
  }
  if (parsed.kind === 'malformed') {
    return problemResponse('key-malformed', `${settings.headerName}: ${parsed.reason}`);
  }
  const key = parsed.key;

  const route = settings.route(request);
  const principal = await settings.principal?.(request);
  const body =
    request.body === null ? new Uint8Array(0) : new Uint8Array(await request.arrayBuffer());
  // The body is read once for the fingerprint; the route gets the same bytes.
  const forwarded =
    request.body === null ? request : new Request(request, { body: bodyBytes(body) });
  const payload = await settings.fingerprint(request, body);
  const scope = recordScope(settings.scope, route, principal);

  const produced: Produced = {};
  const fn = (ctx: HandlerContext) => runRoute(settings, forwarded, next, key, ctx, produced);
  let outcome: RunOutcome<StoredResponse>;
  try {
    outcome = await engine.run(key, fn, { payload, scope });
  } catch (error) {
    return answerRunError(error, produced);
  }
  switch (outcome.status) {
    case 'processed':
      return produced.response ?? handlerFailed();
    case 'duplicate':
      return replay(outcome.result);
    case 'in-progress':
      return problemResponse(
        'in-progress',
        'A request with this idempotency key is still being processed; retry after the delay',
        { 'retry-after': retryAfterSeconds(outcome.retryAfterMs) },
      );
    case 'key-reuse':
      return problemResponse(
        'key-reuse',
        'This idempotency key was first used for another request (method, path, query or body)',
      );
    case 'lease-lost':
      // The route ran but another process took the key over: this client still gets its answer.
      return produced.response ?? handlerFailed();
  }
}

/** run()'s fn: the route, its response read for storing, and the client's response kept aside. */
async function runRoute(
  settings: HttpSettings,
  request: Request,
  next: HttpNext,
  key: string,
  ctx: HandlerContext,
  produced: Produced,
): Promise<StoredResponse> {
  const httpContext: HttpContext = {
    idempotencyKey: key,
    fencingToken: ctx.fencingToken,
    attempt: ctx.attempt,
    signal: ctx.signal,
  };
  let response: Response;
  try {
    response = await next(request, httpContext);
  } catch (thrown) {
    produced.thrown = thrown;
    throw thrown;
  }
  const { status, statusText } = response;
  const headers = replayableHeaders(response.headers, settings.replayHeaders);
  const read = await readBodyUpTo(response.body, settings.maxResponseBytes);
  const init = { status, statusText, headers: response.headers };
  const stored: StoredResponse =
    read.kind === 'complete'
      ? { status, headers, body: read.bytes }
      : { status, headers, bodyOmitted: 'too-large' };
  const forClient = new Response(
    bodyFor(status, read.kind === 'complete' ? bodyBytes(read.bytes) : read.stream),
    init,
  );
  produced.response = forClient;
  if (!settings.storeStatus(status)) throw new UnstoredResponse(forClient);
  return stored;
}

/** The answer when run() rejected: the route's own response when it produced one. */
function answerRunError(error: unknown, produced: Produced): Response {
  if (error instanceof UnstoredResponse) return error.response;
  // The route answered but its completion could not be recorded: its client still gets it.
  if (produced.response) return produced.response;
  if ('thrown' in produced) return handlerFailed();
  if (isIdemqError(error)) {
    if (error.code === ErrorCodes.STORE_UNAVAILABLE) {
      return problemResponse(
        'store-unavailable',
        'The idempotency store cannot be reached; retry after the delay',
        { 'retry-after': retryAfterSeconds(STORE_DOWN_RETRY_AFTER_MS) },
      );
    }
    if (error.code === ErrorCodes.STORE_REJECTED) {
      return problemResponse('store-rejected', 'The idempotency store refused this record');
    }
    if (
      error.code === ErrorCodes.REQUEST_ID_INVALID ||
      error.code === ErrorCodes.REQUEST_ID_TOO_LONG
    ) {
      return problemResponse('key-malformed', error.message);
    }
  }
  throw error;
}

function replay(stored: StoredResponse | undefined): Response {
  if (isStoredResponse(stored)) return replayResponse(stored);
  // The store kept no response (its limit is below even the status and headers).
  return new Response(null, {
    status: 200,
    headers: { [REPLAYED_HEADER]: 'true', [BODY_OMITTED_HEADER]: 'too-large' },
  });
}

function handlerFailed(): Response {
  return problemResponse(
    'handler-failed',
    'The route failed; retrying with the same key runs it again',
  );
}

function passThrough(request: Request, next: HttpNext): Promise<Response> {
  return next(request, {
    idempotencyKey: undefined,
    fencingToken: undefined,
    attempt: undefined,
    signal: NO_LEASE_SIGNAL,
  });
}
