import { createIdempotency } from '../engine/createIdempotency.js';
import type { HandlerContext, RunOutcome } from '../engine/types.js';
import { ErrorCodes, isIdemqError } from '../errors/index.js';
import type { Store } from '../store/store.js';
import { responseSerializer } from './responseSerializer.js';
import { isStoredResponse, type StoredResponse } from './storedResponse.js';

/** The retry hint when the store is down: it gives no better one. */
export const STORE_DOWN_RETRY_AFTER_MS = 1_000;

/** Why a front answers a request without its handler's response. */
export type RefusalKind =
  | 'key-missing'
  | 'key-malformed'
  | 'key-reuse'
  | 'in-progress'
  | 'store-unavailable'
  | 'store-rejected'
  | 'handler-failed';

/** A refusal: HTTP makes it a problem answer (409 + Retry-After…), gRPC a status (ABORTED + RetryInfo…). */
export interface Refusal {
  kind: RefusalKind;
  detail: string;
  /** When a retry may succeed, for `in-progress` (the lease time left) and `store-unavailable`. */
  retryAfterMs?: number;
}

/** What one protocol answers with: its refusals and its replays. */
export interface ResponseFront<Answer> {
  refuse(refusal: Refusal): Answer;
  /** The replay of a stored response, or of a record that kept none (`undefined`). */
  replay(stored: StoredResponse | undefined): Answer;
}

/** The handler's response: what the store keeps (when `storable`) and what its client gets. */
export interface ProducedResponse<Answer> {
  stored: StoredResponse;
  answer: Answer;
  /** False for a response that must not be replayed (HTTP 5xx, gRPC UNAVAILABLE…): the record is FAILED. */
  storable: boolean;
}

/** One keyed request, ready to run: `produce` runs its handler under the claim. */
export interface GuardedRequest<Answer> {
  key: string;
  scope: string;
  /** What the request's fingerprint is made of (hashed by the engine): a retry with another is `key-reuse`. */
  payload: string | Uint8Array;
  produce(ctx: HandlerContext): Promise<ProducedResponse<Answer>>;
}

export interface ResponseGuardOptions {
  store: Store;
  scope: string;
  leaseMs?: number | undefined;
  ttlMs?: number | undefined;
  inProgressRetryMaxDelayMs?: number | undefined;
  /** `'fail'`: store down refuses (`store-unavailable`); `'process'` runs the handler unclaimed. */
  onStoreError?: 'fail' | 'process' | undefined;
}

/** Runs a request's handler once per key and answers; how to answer is the front's. */
export type ResponseGuard = <Answer>(
  request: GuardedRequest<Answer>,
  front: ResponseFront<Answer>,
) => Promise<Answer>;

/**
 * The decision flow every request/response front shares (HTTP, gRPC): claim the key, run the
 * handler once, store its response, and turn every other outcome into a replay or a refusal.
 */
export function createResponseGuard(options: ResponseGuardOptions): ResponseGuard {
  const engine = createIdempotency({
    store: options.store,
    scope: options.scope,
    storeResults: true,
    serializer: responseSerializer,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.ttlMs === undefined ? {} : { completedTtlMs: options.ttlMs }),
    ...(options.inProgressRetryMaxDelayMs === undefined
      ? {}
      : { inProgressRetryMaxDelayMs: options.inProgressRetryMaxDelayMs }),
    onStoreError: options.onStoreError === 'process' ? 'process' : 'retry',
  });
  return async <Answer>(request: GuardedRequest<Answer>, front: ResponseFront<Answer>) => {
    const produced: Produced<Answer> = {};
    const fn = (ctx: HandlerContext) => produceOnce(request, ctx, produced);
    let outcome: RunOutcome<StoredResponse>;
    try {
      outcome = await engine.run(request.key, fn, {
        payload: request.payload,
        scope: request.scope,
      });
    } catch (error) {
      return answerRunError(front, error, produced);
    }
    switch (outcome.status) {
      case 'processed':
        return produced.answer ?? handlerFailed(front);
      case 'duplicate':
        // A result no front wrote replays as a record that kept no response.
        return front.replay(isStoredResponse(outcome.result) ? outcome.result : undefined);
      case 'in-progress':
        return front.refuse({
          kind: 'in-progress',
          detail:
            'A request with this idempotency key is still being processed; retry after the delay',
          retryAfterMs: outcome.retryAfterMs,
        });
      case 'key-reuse':
        return front.refuse({
          kind: 'key-reuse',
          detail: 'This idempotency key was first used for another request',
        });
      case 'lease-lost':
        // The handler ran but another process took the key over: this client still gets its answer.
        return produced.answer ?? handlerFailed(front);
    }
  };
}

/** What one request's run produced, kept beside run() since its outcome may drop it. */
interface Produced<Answer> {
  answer?: Answer;
  thrown?: unknown;
}

/**
 * Thrown out of run()'s fn for a response that must not be stored, so that the record is FAILED
 * and a retry runs again; its client still gets the answer.
 */
class UnstorableResponse extends Error {
  constructor(status: number) {
    super(`the handler answered status ${status}, which is not stored`);
    this.name = 'UnstorableResponse';
  }
}

async function produceOnce<Answer>(
  request: GuardedRequest<Answer>,
  ctx: HandlerContext,
  produced: Produced<Answer>,
): Promise<StoredResponse> {
  let response: ProducedResponse<Answer>;
  try {
    response = await request.produce(ctx);
  } catch (thrown) {
    produced.thrown = thrown;
    throw thrown;
  }
  produced.answer = response.answer;
  if (!response.storable) throw new UnstorableResponse(response.stored.status);
  return response.stored;
}

/** The answer when run() rejected: the handler's own answer when it produced one. */
function answerRunError<Answer>(
  front: ResponseFront<Answer>,
  error: unknown,
  produced: Produced<Answer>,
): Answer {
  // Unstorable, or answered but its completion could not be recorded: its client still gets it.
  if (produced.answer !== undefined) return produced.answer;
  if ('thrown' in produced) return handlerFailed(front);
  if (isIdemqError(error)) {
    if (error.code === ErrorCodes.STORE_UNAVAILABLE) {
      return front.refuse({
        kind: 'store-unavailable',
        detail: 'The idempotency store cannot be reached; retry after the delay',
        retryAfterMs: STORE_DOWN_RETRY_AFTER_MS,
      });
    }
    if (error.code === ErrorCodes.STORE_REJECTED) {
      return front.refuse({
        kind: 'store-rejected',
        detail: 'The idempotency store refused this record',
      });
    }
    if (
      error.code === ErrorCodes.REQUEST_ID_INVALID ||
      error.code === ErrorCodes.REQUEST_ID_TOO_LONG
    ) {
      return front.refuse({ kind: 'key-malformed', detail: error.message });
    }
  }
  throw error;
}

function handlerFailed<Answer>(front: ResponseFront<Answer>): Answer {
  return front.refuse({
    kind: 'handler-failed',
    detail: 'The handler failed; retrying with the same key runs it again',
  });
}
