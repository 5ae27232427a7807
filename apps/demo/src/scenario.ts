/**
 * The run: one broker and one store, N consumers (each on its own connection, like N processes),
 * a publisher that sends every payment once and a planned share of them twice, and a handler that
 * "charges" each payment into the ledger while failing as the fault plan says. With a
 * transactional store (`--store postgres`) the ledger is a table the handler inserts into inside
 * the run's transaction, and the planned failures come after that INSERT, before COMMIT.
 */
import { setTimeout as sleep, setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  type ConsumedMessage,
  type Consumer,
  createConsumer,
  type HandlerContext,
  type RetryPolicy,
  type Transport,
  uuidv7,
} from '@idemq/core';
import { resolveStore, resolveTransport, type StoreKit, type TransportKit } from './adapters.js';
import { type FaultPlan, planFaults } from './faults.js';
import { Ledger } from './ledger.js';
import type { DatabaseLedger } from './postgres/postgresKit.js';
import type { ProgressSnapshot } from './progress.js';
import { PublishWindow } from './publishWindow.js';

/** A payment as published; `seq` lets the handler look up its planned faults. */
export interface Payment {
  seq: number;
  paymentId: string;
  account: string;
  amountCents: number;
  currency: 'EUR';
}

/** What the handler returns once a payment is charged. */
export interface Receipt {
  paymentId: string;
  chargedCents: number;
}

export interface ScenarioOptions {
  /** Unique payments to publish. */
  messages: number;
  /** Fraction of payments published a second time, 0 … 1. */
  duplicates: number;
  /** Consumers, each with its own connection to the broker. */
  consumers: number;
  /** Seed of the fault plan; the same seed meets the same faults. */
  seed: number;
  /** When the run gives up; ids not settled by then count as lost. */
  timeoutMs: number;
  /** A name from the adapter registry. @default 'memory' */
  transport?: string;
  /** A name from the adapter registry. @default 'memory' */
  store?: string;
  /** @default 0.01 */
  poisonRate?: number;
  /** @default 0.05 */
  failureRate?: number;
  /** Handlers running at once per consumer. @default 10 */
  concurrency?: number;
  /** Record lease; a copy that finds the record in progress waits at most this long. */
  leaseMs?: number;
  /** Small on purpose, so poison is dead-lettered within a second. */
  retry?: Required<Pick<RetryPolicy, 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs'>>;
  /** Aborting ends the run early (Ctrl-C); unsettled ids then count as lost. */
  signal?: AbortSignal;
}

/** Defaults of `pnpm demo`. */
export const SCENARIO_DEFAULTS = Object.freeze({
  messages: 2000,
  duplicates: 0.25,
  consumers: 4,
  timeoutMs: 60_000,
  transport: 'memory',
  store: 'memory',
  concurrency: 10,
  leaseMs: 1000,
  retry: Object.freeze({ maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 200 }),
});

const SOURCE = 'payments';
const DEAD_LETTER_SUFFIX = '.dlq';
const SCOPE = 'billing';
const GROUP = 'billing';
const DLQ_GROUP = 'dlq-watch';
const POLL_MS = 20;
const PUBLISH_BATCH = 50;
/** Publishes in flight at once (brokers answered over the network, one call per message). */
const PUBLISH_WINDOW = 16;

/** Everything the summary shows, measured during one run. */
export interface RunFigures {
  transport: string;
  store: string;
  seed: number;
  consumers: number;
  /** Copies published: originals and duplicates. */
  sent: number;
  uniqueIds: number;
  /** Duplicates published right after their original. */
  concurrentDuplicates: number;
  /** Duplicates published after their original completed. */
  lateDuplicates: number;
  /** Deliveries handed to the consumers, redeliveries included. */
  delivered: number;
  handlerRuns: number;
  completed: number;
  duplicatesSkipped: number;
  /** Copies that found the record in progress and were redelivered later. */
  inProgressRedeliveries: number;
  retries: number;
  /** Distinct ids on the dead-letter queue. */
  deadLettered: number;
  /** Copies on the dead-letter queue (a poison id sent twice lands there twice). */
  deadLetterMessages: number;
  /** Poison payments published (all of the plan's, unless the run was interrupted). */
  poison: number;
  /** Ids charged or completed more than once. Must be 0. */
  processedTwice: number;
  /** Ids neither completed nor dead-lettered at the end. Must be 0. */
  lost: number;
  /** Ids both completed and dead-lettered. Must be 0. */
  completedAndDeadLettered: number;
  /** Dead-lettered ids that were not poison (the plan lets every other id succeed). Must be 0. */
  unexpectedDeadLetters: number;
  /** Copies never acked or dead-lettered (duplicates stuck in the broker). Must be 0. */
  unsettledCopies: number;
  leaseLost: number;
  storeErrors: number;
  errors: number;
  timedOut: boolean;
  interrupted: boolean;
  elapsedMs: number;
  /** A few offending ids and error messages, for the report. */
  samples: { processedTwice: string[]; lost: string[]; errors: string[] };
  /** With `--store postgres`: the ledger table, counted by the database after the run. */
  database?: DatabaseFigures;
}

/** The ledger table of a transactional store at the end of the run. */
export interface DatabaseFigures {
  /** `schema.table`; the schema is dropped when the run ends. */
  table: string;
  /** `SELECT count(*)`: the charges that committed. */
  rows: number;
  /** `count(DISTINCT payment_id)`. Must equal `rows` and `completed`. */
  distinctPayments: number;
  /** Ledger INSERTs the handlers made, committed or not. */
  inserted: number;
  /** `inserted − rows`: handler runs whose row was rolled back with their transaction. */
  rolledBack: number;
  /** Runs that threw after their INSERT (transient failure, poison): the engine rolled back. */
  failedAfterInsert: number;
  /** Runs whose connection was killed after their INSERT: the server rolled back. */
  connectionsKilled: number;
  /** Payments completed without exactly one row, or with rows but no completion. Must be 0. */
  mismatched: number;
}

/** A prepared run: poll `snapshot()` for progress while `run()` is pending. */
export interface Scenario {
  readonly plan: FaultPlan;
  snapshot(): ProgressSnapshot;
  run(): Promise<RunFigures>;
}

/** Prepares a run; validates the adapter names before anything is opened. */
export function createScenario(options: ScenarioOptions): Scenario {
  const transportName = options.transport ?? SCENARIO_DEFAULTS.transport;
  const storeName = options.store ?? SCENARIO_DEFAULTS.store;
  const openTransport = resolveTransport(transportName);
  const openStore = resolveStore(storeName);
  const retry = options.retry ?? SCENARIO_DEFAULTS.retry;
  const plan = planFaults({
    messages: options.messages,
    duplicates: options.duplicates,
    seed: options.seed,
    maxAttempts: retry.maxAttempts,
    ...(options.poisonRate === undefined ? {} : { poisonRate: options.poisonRate }),
    ...(options.failureRate === undefined ? {} : { failureRate: options.failureRate }),
  });
  const planned = { concurrent: 0, late: 0 };
  for (const kind of plan.duplicates.values()) {
    if (kind === 'concurrent') planned.concurrent++;
    else planned.late++;
  }

  const ledger = new Ledger();
  // Set once the store is open: the ledger table of a transactional store.
  let database: DatabaseLedger | undefined;
  const counters = {
    sent: 0,
    concurrentSent: 0,
    lateSent: 0,
    pendingPublishes: 0,
    delivered: 0,
    terminal: 0,
    inProgress: 0,
    retries: 0,
    deadLetterEvents: 0,
    deadLetterArrivals: 0,
    leaseLost: 0,
    storeErrors: 0,
    errors: 0,
    ledgerInserts: 0,
    failedAfterInsert: 0,
    connectionsKilled: 0,
  };
  const errorSamples: string[] = [];
  let startedAt = 0;
  let phase: ProgressSnapshot['phase'] = 'starting';

  const noteError = (error: unknown) => {
    counters.errors++;
    if (errorSamples.length < 5) errorSamples.push(String(error));
  };

  async function handler(message: ConsumedMessage<Payment>, ctx: HandlerContext): Promise<Receipt> {
    const payment = message.value;
    ledger.handlerStarted(ctx.requestId);
    const work = plan.workMs(payment.seq, ctx.attempt);
    // Honour the signal: a handler that lost its lease must not charge.
    if (work > 0) await sleep(work, undefined, { signal: ctx.signal });
    else ctx.signal.throwIfAborted();
    if (database) return chargeInTransaction(database, payment, ctx);
    const failure = plannedFailure(payment, ctx.attempt);
    if (failure) throw failure;
    // The last check before the irreversible effect: exact even if timers were starved.
    if (ctx.leaseRemainingMs() === 0) throw new Error(`payment ${payment.paymentId}: lease lapsed`);
    ledger.effectApplied(ctx.requestId);
    return { paymentId: payment.paymentId, chargedCents: payment.amountCents };
  }

  /**
   * The charge first, then everything that can still go wrong: the ledger row is written before
   * the run fails or its consumer dies, and must vanish with the transaction. No lease check: the
   * completion that commits the row is fenced by the claim's token, so a run that lost its lease
   * commits nothing.
   */
  async function chargeInTransaction(
    table: DatabaseLedger,
    payment: Payment,
    ctx: HandlerContext,
  ): Promise<Receipt> {
    const { paymentId, account, amountCents } = payment;
    await table.charge(ctx, {
      paymentId,
      requestId: ctx.requestId,
      account,
      amountCents,
      attempt: ctx.attempt,
    });
    counters.ledgerInserts++;
    if (plan.killsConnection(payment.seq, ctx.attempt)) {
      await table.killConnection(ctx);
      counters.connectionsKilled++;
      throw new Error(`payment ${paymentId}: connection killed after the INSERT, before COMMIT`);
    }
    const failure = plannedFailure(payment, ctx.attempt);
    if (failure) {
      counters.failedAfterInsert++;
      throw failure;
    }
    return { paymentId, chargedCents: amountCents };
  }

  function plannedFailure(payment: Payment, attempt: number): Error | undefined {
    if (plan.poison.has(payment.seq)) {
      return new Error(`payment ${payment.paymentId}: card issuer rejects the request format`);
    }
    if (plan.failsTransiently(payment.seq, attempt)) {
      return new Error(`payment ${payment.paymentId}: gateway timeout (attempt ${attempt})`);
    }
    return undefined;
  }

  async function run(): Promise<RunFigures> {
    startedAt = performance.now();
    const kit = openTransport({ deadLetterSuffix: DEAD_LETTER_SUFFIX });
    const concurrency = options.concurrency ?? SCENARIO_DEFAULTS.concurrency;
    const storeKit = openStore({ concurrentRuns: options.consumers * concurrency });
    const publisher = kit.connect();
    const ids: string[] = new Array(options.messages);
    const seqById = new Map<string, number>();
    const lateSent = new Set<number>();
    const consumers: Consumer[] = [];

    const publish = async (seq: number) => {
      const requestId = ids[seq]!;
      ledger.published(requestId);
      counters.pendingPublishes++;
      try {
        await publisher.publish(SOURCE, { requestId, body: payment(seq, options.seed) });
        counters.sent++;
      } finally {
        counters.pendingPublishes--;
      }
    };

    try {
      // Fail fast with the store's own error (e.g. Redis not running) instead of a timeout.
      await storeKit.ready?.();
      database = storeKit.ledger;
      // The dead-letter queue is watched like an operator would: what lands there is what counts.
      await publisher.subscribe({
        source: SOURCE + DEAD_LETTER_SUFFIX,
        group: DLQ_GROUP,
        maxInFlight: 64,
        onDelivery: (delivery) => {
          const { requestId } = delivery.message;
          counters.deadLetterArrivals++;
          if (typeof requestId === 'string') ledger.deadLettered(requestId);
          else noteError(`dead letter without a requestId: ${String(requestId)}`);
          delivery.ack().catch(noteError);
        },
        onError: noteError,
      });

      for (let i = 0; i < options.consumers; i++) {
        const consumer = createConsumer<Payment, Receipt>({
          transport: countDeliveries(kit.connect(), () => counters.delivered++),
          source: SOURCE,
          group: GROUP,
          scope: SCOPE,
          store: storeKit.store,
          handler,
          concurrency,
          leaseMs: options.leaseMs ?? SCENARIO_DEFAULTS.leaseMs,
          retry: { ...retry, jitter: 'full' },
        });
        consumer.on('processed', ({ requestId }) => {
          counters.terminal++;
          ledger.completed(requestId);
          const seq = seqById.get(requestId);
          if (seq === undefined || plan.duplicates.get(seq) !== 'after-completion') return;
          // Once the run is winding down (timeout, Ctrl-C) nothing new is published.
          if (lateSent.has(seq) || phase === 'stopping' || phase === 'done') return;
          lateSent.add(seq);
          counters.lateSent++;
          publish(seq).catch(noteError);
        });
        consumer.on('duplicate', ({ requestId }) => {
          counters.terminal++;
          ledger.duplicateSkipped(requestId);
        });
        consumer.on('dead-letter', () => {
          counters.terminal++;
          counters.deadLetterEvents++;
        });
        consumer.on('in-progress', () => counters.inProgress++);
        consumer.on('retry', () => counters.retries++);
        consumer.on('lease-lost', () => counters.leaseLost++);
        consumer.on('store-error', () => counters.storeErrors++);
        consumer.on('error', ({ error }) => noteError(error));
        consumers.push(consumer);
      }
      await Promise.all(consumers.map((consumer) => consumer.start()));

      phase = 'publishing';
      const window = new PublishWindow(PUBLISH_WINDOW);
      for (let seq = 0; seq < options.messages && !options.signal?.aborted; seq++) {
        const requestId = uuidv7();
        ids[seq] = requestId;
        seqById.set(requestId, seq);
        await window.add(() => publish(seq));
        if (plan.duplicates.get(seq) === 'concurrent') {
          counters.concurrentSent++;
          await window.add(() => publish(seq));
        }
        // The in-memory publish never leaves the microtask queue; without a pause now and then
        // it starves timers (handlers' work, lease heartbeats, retry delays) for the whole loop.
        if (seq % PUBLISH_BATCH === PUBLISH_BATCH - 1) await yieldToLoop();
      }
      await window.drain();

      phase = 'draining';
      const outcome = await waitUntil(
        () => settled(kit),
        options.timeoutMs - (performance.now() - startedAt),
        options.signal,
      );
      phase = 'stopping';
      await Promise.all(consumers.map((consumer) => consumer.stop({ timeoutMs: 5_000 })));

      const databaseFigures = await countDatabase(storeKit);
      const report = ledger.report();
      let unexpectedDeadLetters = 0;
      let poisonPublished = 0;
      for (const [requestId, seq] of seqById) {
        if (plan.poison.has(seq)) poisonPublished++;
        else if (ledger.isDeadLettered(requestId)) unexpectedDeadLetters++;
      }
      return {
        transport: kit.name,
        store: storeKit.name,
        seed: options.seed,
        consumers: options.consumers,
        sent: counters.sent,
        uniqueIds: report.uniqueIds,
        concurrentDuplicates: counters.concurrentSent,
        lateDuplicates: counters.lateSent,
        delivered: counters.delivered,
        handlerRuns: report.handlerRuns,
        completed: report.completed,
        duplicatesSkipped: report.duplicatesSkipped,
        inProgressRedeliveries: counters.inProgress,
        retries: counters.retries,
        deadLettered: report.deadLettered,
        deadLetterMessages: report.deadLetterMessages,
        poison: poisonPublished,
        processedTwice: report.processedTwice.length,
        lost: report.lost.length,
        completedAndDeadLettered: report.completedAndDeadLettered.length,
        unexpectedDeadLetters,
        unsettledCopies: Math.max(0, counters.sent - counters.terminal),
        leaseLost: counters.leaseLost,
        storeErrors: counters.storeErrors,
        errors: counters.errors,
        timedOut: outcome === 'timeout',
        interrupted: outcome === 'aborted',
        elapsedMs: Math.round(performance.now() - startedAt),
        samples: {
          processedTwice: report.processedTwice.slice(0, 5),
          lost: report.lost.slice(0, 5),
          errors: errorSamples,
        },
        ...(databaseFigures === undefined ? {} : { database: databaseFigures }),
      };
    } finally {
      phase = 'stopping';
      await Promise.allSettled(consumers.map((consumer) => consumer.close()));
      await kit.close();
      await storeKit.close();
      phase = 'done';
    }

    /**
     * The ledger table as the database counts it, once every transaction has ended. Its rows are
     * the run's effects: the ledger's "processed twice" then counts rows, not handler returns.
     */
    async function countDatabase(kit: StoreKit): Promise<DatabaseFigures | undefined> {
      if (!kit.ledger) return undefined;
      const count = await kit.ledger.count();
      let mismatched = 0;
      for (const [requestId, rows] of count.rowsByRequestId) {
        for (let row = 0; row < rows; row++) ledger.effectApplied(requestId);
        if (!seqById.has(requestId)) mismatched++;
      }
      for (const requestId of seqById.keys()) {
        const rows = count.rowsByRequestId.get(requestId) ?? 0;
        if (ledger.isCompleted(requestId) ? rows !== 1 : rows > 0) mismatched++;
      }
      return {
        table: kit.ledger.table,
        rows: count.rows,
        distinctPayments: count.distinctPayments,
        inserted: counters.ledgerInserts,
        rolledBack: counters.ledgerInserts - count.rows,
        failedAfterInsert: counters.failedAfterInsert,
        connectionsKilled: counters.connectionsKilled,
        mismatched,
      };
    }

    /** Every id settled, every copy acked or dead-lettered, every dead letter seen. */
    async function settled(transport: TransportKit): Promise<boolean> {
      if (counters.pendingPublishes > 0 || counters.lateSent < planned.late) return false;
      if (ledger.settled < ledger.uniqueIds || ledger.uniqueIds < options.messages) return false;
      // Each copy ends in exactly one processed / duplicate / dead-letter event.
      if (counters.terminal < counters.sent) return false;
      if (counters.deadLetterArrivals < counters.deadLetterEvents) return false;
      // Where the broker can tell, it must agree that nothing is left in flight or delayed.
      const backlogs = await Promise.all([
        transport.backlog(SOURCE, GROUP),
        transport.backlog(SOURCE + DEAD_LETTER_SUFFIX, DLQ_GROUP),
      ]);
      return backlogs.every((backlog) => backlog === undefined || backlog === 0);
    }
  }

  return {
    plan,
    snapshot: () => ({
      phase,
      sent: counters.sent,
      toSend: options.messages + planned.concurrent + planned.late,
      settled: ledger.settled,
      uniqueIds: options.messages,
      retries: counters.retries,
      deadLettered: counters.deadLetterArrivals,
      duplicatesSkipped: ledger.duplicatesSkippedTotal,
      elapsedMs: startedAt === 0 ? 0 : performance.now() - startedAt,
    }),
    run,
  };
}

/** The payment with sequence number `seq`; the same seed gives the same amounts. */
function payment(seq: number, seed: number): Payment {
  return {
    seq,
    paymentId: `pay_${String(seq).padStart(6, '0')}`,
    account: `acct_${(seq * 7919 + seed) % 997}`,
    amountCents: 100 + ((seq * 2654435761 + seed) % 99_900),
    currency: 'EUR',
  };
}

/** The same transport, counting every delivery it hands to the consumer. */
function countDeliveries(inner: Transport, onDelivery: () => void): Transport {
  return {
    name: inner.name,
    capabilities: inner.capabilities,
    subscribe: (request) =>
      inner.subscribe({
        ...request,
        onDelivery: (delivery) => {
          onDelivery();
          request.onDelivery(delivery);
        },
      }),
    publish: (destination, message) => inner.publish(destination, message),
    close: () => inner.close(),
  };
}

/** Polls `condition` until it holds, the time is up or `signal` aborts. */
async function waitUntil(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<'done' | 'timeout' | 'aborted'> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) return 'aborted';
    if (await condition()) return 'done';
    if (performance.now() >= deadline) return 'timeout';
    await sleep(POLL_MS);
  }
}
