/**
 * `pnpm demo --transport grpc`: a payments API (the unary `idemq.demo.Payments/CreatePayment`,
 * served by grpc-js behind @idemq/grpc's idempotencyInterceptor) and clients whose short
 * deadlines make them retry with the same `idempotency-key` while the handler is still
 * charging; the handler also fails transiently (UNAVAILABLE) as a seeded plan says. The ledger,
 * outside the API, proves that every payment was charged once and every client got its charge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServerUnaryCall, type sendUnaryData, status } from '@grpc/grpc-js';
import { idempotencyContext, idempotencyInterceptor } from '@idemq/grpc';
import { resolveStore } from '../adapters.js';
import { planFaults } from '../faults.js';
import { paymentSeq, plannedDurations, runPaymentClients } from '../payments/paymentClients.js';
import { type Charge, type ClientOutcome, PaymentsLedger } from '../payments/paymentsLedger.js';
import type { PaymentFigures } from '../payments/paymentsVerdict.js';
import { type LocalGrpcServer, serveLocally } from './localGrpcServer.js';
import { connectPaymentsClient, type PaymentsClient } from './paymentsClient.js';
import { type CreatePaymentRequest, paymentsApi } from './paymentsService.js';
import type { GrpcAttemptEvent } from './retryingGrpcClient.js';

export interface GrpcScenarioOptions {
  /** Payments requested, each with its own key. */
  payments: number;
  /** Clients sending them, each one payment at a time on its own channel. */
  clients: number;
  /** Seed of the handler's durations and of its transient failures. */
  seed: number;
  /** A name from the store registry: memory or redis. */
  store: string;
  /** When the run gives up; payments not answered by then count as lost. */
  timeoutMs: number;
  /** Every attempt's deadline: the client gets DEADLINE_EXCEEDED after this long. */
  deadlineMs?: number;
  /** The handler's duration is drawn uniformly from 0 to this. */
  maxHandlerMs?: number;
  /** Probability that one handler run fails with UNAVAILABLE before charging. */
  failureRate?: number;
  /**
   * Serves the method without the idempotency interceptor: the run must then fail (charged
   * twice). For the tests that prove the checks can fail. @default false
   */
  unprotected?: boolean;
  /** Aborting ends the run early (Ctrl-C); unanswered payments then count as lost. */
  signal?: AbortSignal;
}

export const GRPC_SCENARIO_DEFAULTS = Object.freeze({
  payments: 500,
  clients: 16,
  deadlineMs: 100,
  maxHandlerMs: 150,
  failureRate: 0.05,
  /** A key's record attempt this high never fails: bad luck cannot exhaust a client's attempts. */
  lastFailingAttempt: 2,
  maxAttempts: 20,
  baseBackoffMs: 20,
  maxBackoffMs: 200,
});

/** Everything the gRPC summary shows. */
export interface GrpcRunFigures extends PaymentFigures {
  transport: 'grpc';
  server: string;
  store: string;
  seed: number;
  clients: number;
  deadlineMs: number;
  maxHandlerMs: number;
  failureRate: number;
  /** Payments the clients were asked to make. */
  requested: number;
  /** Calls sent: first attempts and retries. */
  calls: number;
  /** Attempts that ended DEADLINE_EXCEEDED, the handler possibly still running. */
  deadlineExpiries: number;
  /** Answers ABORTED: the same key still in flight. */
  aborted: number;
  /** Answers UNAVAILABLE: the handler's transient failures (not stored, so a retry runs again). */
  unavailable: number;
  /** OK answers carrying `idempotent-replayed: true`. */
  replays: number;
  /** Other statuses. Must be 0 here. */
  unexpectedStatuses: number;
  /** Times the handler ran. */
  handlerRuns: number;
  /** Handler runs that failed as planned, before charging. */
  injectedFailures: number;
  /** Charges made, all payments together (equal to `charged` when none was charged twice). */
  charges: number;
  /** Payments charged at least once. */
  charged: number;
  elapsedMs: number;
  samples: { chargedTwice: string[]; lost: string[]; errors: string[] };
}

/** Runs the scenario: starts the gRPC server, lets the clients pay, checks the ledger. */
export async function runGrpcScenario(options: GrpcScenarioOptions): Promise<GrpcRunFigures> {
  const D = GRPC_SCENARIO_DEFAULTS;
  const deadlineMs = options.deadlineMs ?? D.deadlineMs;
  const maxHandlerMs = options.maxHandlerMs ?? D.maxHandlerMs;
  const failureRate = options.failureRate ?? D.failureRate;
  const startedAt = performance.now();
  const deadline = AbortSignal.any([
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal ? [options.signal] : []),
  ]);
  const handlerMs = plannedDurations(options.seed, options.payments, maxHandlerMs);
  // The broker demo's fault plan, without poison: a pure function of (seed, payment, attempt).
  const faults = planFaults({
    messages: options.payments,
    duplicates: 0,
    seed: options.seed,
    poisonRate: 0,
    failureRate,
    maxAttempts: D.lastFailingAttempt + 1,
  });
  const ledger = new PaymentsLedger();
  const counts = {
    calls: 0,
    deadlineExpiries: 0,
    aborted: 0,
    unavailable: 0,
    replays: 0,
    unexpected: 0,
    handlerRuns: 0,
    injectedFailures: 0,
  };
  const errors: string[] = [];
  const onAttempt = (event: GrpcAttemptEvent) => {
    counts.calls++;
    if (event.code === status.OK) {
      if (event.replayed) counts.replays++;
    } else if (event.code === status.DEADLINE_EXCEEDED) counts.deadlineExpiries++;
    else if (event.code === status.ABORTED) counts.aborted++;
    else if (event.code === status.UNAVAILABLE) counts.unavailable++;
    else {
      counts.unexpected++;
      if (errors.length < 5) errors.push(`${status[event.code]}: ${event.details}`);
    }
  };

  // Unguarded runs have no record attempt: the handler counts them itself.
  const runsByPayment = new Map<string, number>();
  const createPayment = async (
    call: ServerUnaryCall<CreatePaymentRequest, Charge>,
    callback: sendUnaryData<Charge>,
  ): Promise<void> => {
    counts.handlerRuns++;
    const { paymentId, amountCents } = call.request;
    const seq = paymentSeq(paymentId);
    const context = idempotencyContext(call);
    const attempt = context?.attempt ?? (runsByPayment.get(paymentId) ?? 0) + 1;
    runsByPayment.set(paymentId, attempt);
    try {
      // The card network's latency: sometimes longer than the client's deadline.
      await sleep(handlerMs[seq] ?? 0, undefined, { signal: context?.signal });
    } catch {
      // The lease was lost: another run owns the payment now, this one must not charge.
      callback({ code: status.ABORTED, details: 'lease lost before charging' });
      return;
    }
    if (faults.failsTransiently(seq, attempt)) {
      counts.injectedFailures++;
      callback({ code: status.UNAVAILABLE, details: 'card network unavailable (injected)' });
      return;
    }
    callback(null, ledger.charge(paymentId, amountCents));
  };

  const api = paymentsApi();
  const storeKit = resolveStore(options.store)();
  await storeKit.ready?.();
  let server: LocalGrpcServer | undefined;
  const clients: PaymentsClient[] = [];
  let outcomes: ClientOutcome[];
  try {
    server = await serveLocally(
      api.service,
      {
        CreatePayment: (
          call: ServerUnaryCall<CreatePaymentRequest, Charge>,
          callback: sendUnaryData<Charge>,
        ) => void createPayment(call, callback),
      },
      // Unprotected: the handler gets every call, as if the interceptor were not there.
      options.unprotected
        ? []
        : [idempotencyInterceptor({ store: storeKit.store, methods: [api.service] })],
    );
    for (let index = 0; index < options.clients; index++) {
      clients.push(
        connectPaymentsClient(server.address, {
          deadlineMs,
          maxAttempts: D.maxAttempts,
          baseBackoffMs: D.baseBackoffMs,
          maxBackoffMs: D.maxBackoffMs,
          onAttempt,
        }),
      );
    }
    outcomes = await runPaymentClients({
      payments: options.payments,
      clients: options.clients,
      signal: deadline,
      pay: async (order, index) => {
        const result = await (clients[index] as PaymentsClient).createPayment(order);
        if (result.ok) return result.response.chargeId;
        if (errors.length < 5) errors.push(`${order.paymentId}: ${result.reason}`);
        return undefined;
      },
    });
    // Handlers whose clients gave up may still be charging: wait for them before judging.
    await sleep(maxHandlerMs + 50);
  } finally {
    for (const client of clients) client.close();
    await server?.close();
    await storeKit.close();
  }

  const report = ledger.report(outcomes);
  return {
    transport: 'grpc',
    server: 'grpc-js + @idemq/grpc interceptor',
    store: storeKit.name,
    seed: options.seed,
    clients: options.clients,
    deadlineMs,
    maxHandlerMs,
    failureRate,
    requested: options.payments,
    calls: counts.calls,
    deadlineExpiries: counts.deadlineExpiries,
    aborted: counts.aborted,
    unavailable: counts.unavailable,
    replays: counts.replays,
    unexpectedStatuses: counts.unexpected,
    handlerRuns: counts.handlerRuns,
    injectedFailures: counts.injectedFailures,
    charges: ledger.totalCharges,
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
