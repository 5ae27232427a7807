/**
 * The gRPC clients' retry loop: the same `idempotency-key` on every attempt, a short deadline
 * per attempt, retries of DEADLINE_EXCEEDED, ABORTED and UNAVAILABLE. ABORTED (the first call
 * still runs) waits the `retry-after-ms` the server advises, capped to keep the demo short.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  Metadata,
  type MethodDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { REPLAYED_METADATA, RETRY_AFTER_METADATA } from '@idemq/grpc';
import { retryBackoffMs } from '../payments/paymentClients.js';

export interface GrpcRetryOptions {
  /** Each attempt's deadline, from its start (the server's handler may still finish). */
  deadlineMs: number;
  /** Attempts per logical call, the first included. */
  maxAttempts: number;
  /** First backoff; doubled on every retry up to `maxBackoffMs`. */
  baseBackoffMs: number;
  /** Upper bound of every wait, the advised `retry-after-ms` included. */
  maxBackoffMs: number;
  /** Called once per attempt with its status, for the summary's counts. */
  onAttempt?: (event: GrpcAttemptEvent) => void;
}

/** One attempt: its status code, and whether the answer was a replay (`idempotent-replayed`). */
export interface GrpcAttemptEvent {
  code: status;
  replayed: boolean;
  /** The status details of a failed attempt. */
  details?: string;
}

/** The answer that ended a logical call, or why there is none. */
export type GrpcCallResult<Response> =
  | { ok: true; response: Response; attempts: number }
  | { ok: false; code: status; reason: string; attempts: number };

/** Statuses another attempt may change: a deadline, the key in flight, the server unavailable. */
const RETRYABLE = new Set<status>([
  status.DEADLINE_EXCEEDED,
  status.ABORTED,
  status.UNAVAILABLE,
  status.RESOURCE_EXHAUSTED,
]);

/**
 * Calls `method` with `request` and `key` as the idempotency key until an answer that is final
 * (OK, or a status not in the retryable set) or `maxAttempts` attempts.
 */
export async function callWithRetries<Request, Response>(
  client: Client,
  method: MethodDefinition<Request, Response>,
  request: Request,
  key: string,
  options: GrpcRetryOptions,
): Promise<GrpcCallResult<Response>> {
  let last: { code: status; reason: string } = { code: status.UNKNOWN, reason: 'no attempt' };
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    const answer = await callOnce(client, method, request, key, options.deadlineMs);
    if (answer.ok) {
      options.onAttempt?.({ code: status.OK, replayed: answer.replayed });
      return { ok: true, response: answer.response, attempts: attempt };
    }
    const { error } = answer;
    options.onAttempt?.({
      code: error.code,
      replayed: error.metadata?.get(REPLAYED_METADATA)[0] === 'true',
      details: error.details,
    });
    if (!RETRYABLE.has(error.code)) {
      return { ok: false, code: error.code, reason: describe(error), attempts: attempt };
    }
    last = { code: error.code, reason: describe(error) };
    const advisedMs = error.code === status.ABORTED ? retryAfterMs(error.metadata) : undefined;
    const waitMs =
      advisedMs === undefined
        ? retryBackoffMs(attempt, options.baseBackoffMs, options.maxBackoffMs)
        : Math.min(advisedMs, options.maxBackoffMs);
    if (attempt < options.maxAttempts) await sleep(waitMs);
  }
  return { ok: false, ...last, attempts: options.maxAttempts };
}

/** The `retry-after-ms` a refusal carries, in ms; undefined when absent or not a whole number. */
export function retryAfterMs(metadata: Metadata | undefined): number | undefined {
  const [value] = metadata?.get(RETRY_AFTER_METADATA) ?? [];
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  const delayMs = Number(value);
  return Number.isSafeInteger(delayMs) ? delayMs : undefined;
}

type Attempt<Response> =
  | { ok: true; response: Response; replayed: boolean }
  | { ok: false; error: ServiceError };

/** One attempt with its own deadline; a replay is told by its initial metadata. */
function callOnce<Request, Response>(
  client: Client,
  method: MethodDefinition<Request, Response>,
  request: Request,
  key: string,
  deadlineMs: number,
): Promise<Attempt<Response>> {
  const metadata = new Metadata();
  metadata.set('idempotency-key', key);
  return new Promise((resolve) => {
    let replayed = false;
    const call = client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      metadata,
      { deadline: Date.now() + deadlineMs },
      (error, response) => {
        if (error) resolve({ ok: false, error });
        else resolve({ ok: true, response: response as Response, replayed });
      },
    );
    call.on('metadata', (headers: Metadata) => {
      replayed = headers.get(REPLAYED_METADATA)[0] === 'true';
    });
  });
}

function describe(error: ServiceError): string {
  return `${status[error.code] ?? error.code}: ${error.details}`;
}
