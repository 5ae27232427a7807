/**
 * The clients' side: one key per logical request, the same key on every retry, a short timeout
 * per attempt. Written with plain fetch; its shape (`send(url, init) → Response`) is the one
 * `idempotentFetch` from `@idemq/http/client` takes over.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { retryBackoffMs } from '../payments/paymentClients.js';

export interface RetryingClientOptions {
  /** Each attempt gives up after this long (the server's route may still finish). */
  attemptTimeoutMs: number;
  /** Attempts per logical request, the first included. */
  maxAttempts: number;
  /** First backoff; doubled on every retry up to `maxBackoffMs`. */
  baseBackoffMs: number;
  /** Upper bound of every wait, `Retry-After` included, to keep the demo short. */
  maxBackoffMs: number;
  /** Called once per attempt with what happened, for the summary's counts. */
  onAttempt?: (event: AttemptEvent) => void;
}

/** One attempt: an answer (status, replayed or not) or a timeout / network error. */
export type AttemptEvent =
  | { kind: 'response'; status: number; replayed: boolean }
  | { kind: 'timeout' }
  | { kind: 'network-error'; error: unknown };

/** The answer that ended a logical request, or why there is none. */
export type SendResult =
  | { ok: true; response: Response; body: string; attempts: number }
  | { ok: false; reason: string; attempts: number };

/** Statuses a retry may change: in flight (409), server errors, overload. */
const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

/**
 * Sends `init` to `url` with `key` as the Idempotency-Key until an answer that is final (2xx, or
 * a 4xx other than 409/408/425/429) or `maxAttempts` attempts.
 */
export async function sendWithRetries(
  url: string,
  init: { method: string; headers: Record<string, string>; body: string },
  key: string,
  options: RetryingClientOptions,
): Promise<SendResult> {
  let lastReason = 'no attempt';
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    let waitMs = retryBackoffMs(attempt, options.baseBackoffMs, options.maxBackoffMs);
    try {
      const response = await fetch(url, {
        ...init,
        headers: { ...init.headers, 'idempotency-key': JSON.stringify(key) },
        signal: AbortSignal.timeout(options.attemptTimeoutMs),
      });
      // The body is part of the attempt: a timeout while reading it is a timeout too.
      const body = await response.text();
      const replayed = response.headers.get('idempotent-replayed') === 'true';
      options.onAttempt?.({ kind: 'response', status: response.status, replayed });
      if (!RETRYABLE.has(response.status)) {
        return { ok: true, response, body, attempts: attempt };
      }
      lastReason = `HTTP ${response.status}`;
      const retryAfterMs = retryAfter(response.headers.get('retry-after'));
      if (retryAfterMs !== undefined) waitMs = Math.min(retryAfterMs, options.maxBackoffMs);
    } catch (error) {
      if (isTimeout(error)) {
        options.onAttempt?.({ kind: 'timeout' });
        lastReason = `timed out after ${options.attemptTimeoutMs} ms`;
      } else {
        options.onAttempt?.({ kind: 'network-error', error });
        lastReason = error instanceof Error ? error.message : String(error);
      }
    }
    if (attempt < options.maxAttempts) await sleep(waitMs);
  }
  return { ok: false, reason: lastReason, attempts: options.maxAttempts };
}

/** `Retry-After` in delay-seconds form, as ms; undefined when absent or a date. */
export function retryAfter(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}
