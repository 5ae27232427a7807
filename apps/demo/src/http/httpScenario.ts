/**
 * `pnpm demo --transport http`: a payments API (POST /payments with an Idempotency-Key, the route
 * served by @idemq/http's centre over node:http) and clients whose short timeouts make them
 * retry with the same key while the route is still charging. The ledger, outside the API, proves
 * that every payment was charged once and that every client got its charge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { uuidv7 } from '@idemq/core';
import { idempotency } from '@idemq/http/node';
import { resolveStore } from '../adapters.js';
import { plannedDurations, runPaymentClients } from '../payments/paymentClients.js';
import { type ClientOutcome, PaymentsLedger } from '../payments/paymentsLedger.js';
import { listenLocally } from './localServer.js';
import { type AttemptEvent, sendWithRetries } from './retryingClient.js';

export interface HttpScenarioOptions {
  /** Payments requested, each with its own key. */
  payments: number;
  /** Clients sending them, each one payment at a time. */
  clients: number;
  /** Seed of the route's durations. */
  seed: number;
  /** A name from the store registry: memory or redis. */
  store: string;
  /** When the run gives up; payments not answered by then count as lost. */
  timeoutMs: number;
  /** Every attempt of a client gives up after this long. */
  clientTimeoutMs?: number;
  /** The route's duration is drawn uniformly from 0 to this. */
  maxRouteMs?: number;
  /**
   * Serves the route without the idempotency layer: the run must then fail (charged twice).
   * For the tests that prove the checks can fail. @default false
   */
  unprotected?: boolean;
  /** Aborting ends the run early (Ctrl-C); unanswered payments then count as lost. */
  signal?: AbortSignal;
}

export const HTTP_SCENARIO_DEFAULTS = Object.freeze({
  payments: 500,
  clients: 16,
  clientTimeoutMs: 100,
  maxRouteMs: 150,
  maxAttempts: 20,
  baseBackoffMs: 20,
  maxBackoffMs: 200,
});

/** Everything the HTTP summary shows. */
export interface HttpRunFigures {
  transport: 'http';
  server: string;
  store: string;
  seed: number;
  clients: number;
  clientTimeoutMs: number;
  maxRouteMs: number;
  /** Payments the clients were asked to make. */
  requested: number;
  /** Requests sent: first attempts and retries. */
  attempts: number;
  /** Attempts the client gave up on (its timeout), the route possibly still running. */
  timeouts: number;
  networkErrors: number;
  /** Answers 409: the same key still in flight. */
  conflicts: number;
  /** Answers carrying `Idempotent-Replayed: true`. */
  replays: number;
  /** Other answers that are not 2xx (400, 422, 5xx). Must be 0 here. */
  unexpectedStatuses: number;
  /** Times the route ran. */
  routeRuns: number;
  /** Payments charged at least once. */
  charged: number;
  /** Payments charged more than once. Must be 0. */
  chargedTwice: number;
  /** Payments whose client got no answer naming their charge. Must be 0. */
  lost: number;
  timedOut: boolean;
  interrupted: boolean;
  elapsedMs: number;
  samples: { chargedTwice: string[]; lost: string[]; errors: string[] };
}

/** Runs the scenario: starts the API, lets the clients pay, checks the ledger. */
export async function runHttpScenario(options: HttpScenarioOptions): Promise<HttpRunFigures> {
  const D = HTTP_SCENARIO_DEFAULTS;
  const clientTimeoutMs = options.clientTimeoutMs ?? D.clientTimeoutMs;
  const maxRouteMs = options.maxRouteMs ?? D.maxRouteMs;
  const startedAt = performance.now();
  const deadline = AbortSignal.any([
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal ? [options.signal] : []),
  ]);
  const routeMs = plannedDurations(options.seed, options.payments, maxRouteMs);
  const ledger = new PaymentsLedger();
  const counts = {
    attempts: 0,
    timeouts: 0,
    networkErrors: 0,
    conflicts: 0,
    replays: 0,
    unexpected: 0,
    routeRuns: 0,
  };
  const errors: string[] = [];
  const onAttempt = (event: AttemptEvent) => {
    counts.attempts++;
    if (event.kind === 'timeout') counts.timeouts++;
    else if (event.kind === 'network-error') {
      counts.networkErrors++;
      if (errors.length < 5) errors.push(String(event.error));
    } else if (event.status === 409) counts.conflicts++;
    else if (event.replayed) counts.replays++;
    else if (event.status < 200 || event.status > 299) counts.unexpected++;
  };

  const storeKit = resolveStore(options.store)();
  await storeKit.ready?.();
  const idempotent = idempotency({
    store: storeKit.store,
    scope: 'payments-api',
    // Unprotected: every request passes through, as if the middleware were not there.
    ...(options.unprotected ? { methods: [] } : {}),
  });
  const server = await listenLocally(
    idempotent(async (_req, ctx) => {
      const text = new TextDecoder().decode(await ctx.body());
      const { seq, paymentId, amountCents } = JSON.parse(text) as PaymentRequest;
      counts.routeRuns++;
      // The card network's latency: sometimes longer than the client waits.
      await sleep(routeMs[seq] ?? 0);
      const charge = ledger.charge(paymentId, amountCents);
      return {
        status: 201,
        headers: { 'content-type': 'application/json', location: `/payments/${charge.chargeId}` },
        body: JSON.stringify(charge),
      };
    }),
  );

  let outcomes: ClientOutcome[];
  try {
    outcomes = await runPaymentClients({
      payments: options.payments,
      clients: options.clients,
      signal: deadline,
      pay: async ({ seq, paymentId, amountCents }) => {
        // One key per logical payment, reused by every retry.
        const key = uuidv7();
        const body: PaymentRequest = { seq, paymentId, amountCents };
        const result = await sendWithRetries(
          `${server.url}/payments`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          },
          key,
          {
            attemptTimeoutMs: clientTimeoutMs,
            maxAttempts: D.maxAttempts,
            baseBackoffMs: D.baseBackoffMs,
            maxBackoffMs: D.maxBackoffMs,
            onAttempt,
          },
        );
        if (result.ok && result.response.status === 201) {
          return (JSON.parse(result.body) as { chargeId?: string }).chargeId;
        }
        if (errors.length < 5) {
          errors.push(
            `${paymentId}: ${result.ok ? `HTTP ${result.response.status}` : result.reason}`,
          );
        }
        return undefined;
      },
    });
    // Routes whose clients gave up may still be charging: wait for them before judging.
    await sleep(maxRouteMs + 50);
  } finally {
    await server.close();
    await storeKit.close();
  }

  const report = ledger.report(outcomes);
  return {
    transport: 'http',
    server: 'node:http + @idemq/http centre',
    store: storeKit.name,
    seed: options.seed,
    clients: options.clients,
    clientTimeoutMs,
    maxRouteMs,
    requested: options.payments,
    attempts: counts.attempts,
    timeouts: counts.timeouts,
    networkErrors: counts.networkErrors,
    conflicts: counts.conflicts,
    replays: counts.replays,
    unexpectedStatuses: counts.unexpected,
    routeRuns: counts.routeRuns,
    charged: report.charged,
    chargedTwice: report.chargedTwice.length,
    lost: report.lost.length,
    timedOut: deadline.aborted && !options.signal?.aborted,
    interrupted: options.signal?.aborted ?? false,
    elapsedMs: Math.round(performance.now() - startedAt),
    samples: {
      chargedTwice: report.chargedTwice.slice(0, 5),
      lost: report.lost.slice(0, 5),
      errors,
    },
  };
}

interface PaymentRequest {
  seq: number;
  paymentId: string;
  amountCents: number;
}
