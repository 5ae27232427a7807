import { HttpRetriesExhaustedError, type RetriesExhaustedReason } from './errors.js';
import { formatKeyHeader } from './keyHeader.js';
import { isNetworkError } from './networkError.js';
import {
  type FetchFunction,
  type IdempotentFetchOptions,
  type ResolvedOptions,
  resolveOptions,
} from './options.js';
import { readReplayableBody } from './replayableBody.js';
import { parseRetryAfter } from './retryAfter.js';
import { retryDelayMs } from './retryDelay.js';
import { wait } from './wait.js';

/** The call as errors and `onRetry` name it. */
interface CallIdentity {
  key: string;
  method: string;
  url: string;
}

/** What one attempt ended with, when it is worth another. */
type Retriable = { response: Response } | { error: unknown };

/**
 * A `fetch` that makes each call of a covered method (POST and PATCH by default) one logical
 * request: one `Idempotency-Key` (UUIDv7 unless the request carries the header already), the
 * same key and body bytes on every attempt, retries of network errors, attempt timeouts, 409, 429
 * and 5xx with backoff that honours `Retry-After`, and no retry of any other 4xx. Other methods
 * go to `fetch` untouched.
 */
export function idempotentFetch(options?: IdempotentFetchOptions): FetchFunction {
  const config = resolveOptions(options);
  return async (input, init) => {
    if (!config.methods.has(methodOf(input, init))) return config.fetch(input, init);
    return sendWithRetries(new Request(input, init), config);
  };
}

/** The method without building a Request, which would take the body of a Request input. */
function methodOf(input: string | URL | Request, init: RequestInit | undefined): string {
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  return method.toUpperCase();
}

async function sendWithRetries(template: Request, config: ResolvedOptions): Promise<Response> {
  const callerSignal = template.signal;
  callerSignal.throwIfAborted();
  const deadlineAt =
    config.deadlineMs === undefined ? undefined : performance.now() + config.deadlineMs;
  const body = await readReplayableBody(template, config.maxBodyBytes, callerSignal);
  const headers = new Headers(template.headers);
  let key = headers.get(config.headerName);
  if (key === null) {
    key = formatKeyHeader(config.generateKey(), config.keyFormat);
    headers.set(config.headerName, key);
  }
  const call: CallIdentity = { key, method: template.method, url: template.url };

  for (let attempt = 1; ; attempt += 1) {
    const outcome = await sendAttempt(template, headers, body, config, deadlineAt, call, attempt);
    if ('response' in outcome && !config.retryOn(outcome.response.status)) {
      return outcome.response;
    }
    if (attempt >= config.maxAttempts) return giveUp(outcome, 'attempts', call, attempt);
    const retryAfterMs =
      'response' in outcome
        ? parseRetryAfter(outcome.response.headers.get('retry-after'))
        : undefined;
    const delayMs = retryDelayMs(attempt, retryAfterMs, config);
    if (deadlineAt !== undefined && performance.now() + delayMs >= deadlineAt) {
      return giveUp(outcome, 'deadline', call, attempt);
    }
    // The answer is not handed back once another attempt is coming: free its connection.
    if ('response' in outcome) await outcome.response.body?.cancel().catch(() => {});
    config.onRetry?.({
      idempotencyKey: key,
      method: call.method,
      url: call.url,
      attempt,
      delayMs,
      ...('response' in outcome ? { status: outcome.response.status } : { error: outcome.error }),
    });
    await wait(delayMs, callerSignal);
  }
}

async function sendAttempt(
  template: Request,
  headers: Headers,
  body: Uint8Array | null,
  config: ResolvedOptions,
  deadlineAt: number | undefined,
  call: CallIdentity,
  attempt: number,
): Promise<Retriable> {
  const leftMs = deadlineAt === undefined ? undefined : Math.max(1, deadlineAt - performance.now());
  const limitMs = minDefined(config.attemptTimeoutMs, leftMs);
  const timeout = new AbortController();
  const timer =
    limitMs === undefined ? undefined : setTimeout(() => timeout.abort(), Math.ceil(limitMs));
  try {
    const response = await config.fetch(
      new Request(template, {
        headers,
        body,
        signal: AbortSignal.any([template.signal, timeout.signal]),
      }),
    );
    return { response };
  } catch (error) {
    if (template.signal.aborted) throw template.signal.reason;
    if (timeout.signal.aborted) {
      const deadlineReached = deadlineAt !== undefined && performance.now() >= deadlineAt - 1;
      if (deadlineReached) throw exhausted(error, 'deadline', call, attempt);
      return { error };
    }
    if (isNetworkError(error)) return { error };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The last answer when there was one (as fetch resolves with HTTP errors), else the error. */
function giveUp(
  outcome: Retriable,
  reason: RetriesExhaustedReason,
  call: CallIdentity,
  attempts: number,
): Response {
  if ('response' in outcome) return outcome.response;
  throw exhausted(outcome.error, reason, call, attempts);
}

function exhausted(
  cause: unknown,
  reason: RetriesExhaustedReason,
  call: CallIdentity,
  attempts: number,
): HttpRetriesExhaustedError {
  return new HttpRetriesExhaustedError({
    reason,
    attempts,
    idempotencyKey: call.key,
    method: call.method,
    url: call.url,
    cause,
  });
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
