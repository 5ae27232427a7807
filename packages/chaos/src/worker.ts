/**
 * One consumer as the fault suite runs it: its own transport connection, its own Redis store
 * client, the chaos handler, and event counters written to the ledger. Runs inside a child
 * process (`child.ts`), or in-process for the memory transport, which cannot span processes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createConsumer, type MemoryBroker, type Store } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { Counters, Ledger, type TrailEvent } from './ledger.js';
import { trackedStore } from './trackedStore.js';
import { openTransport, type TransportSpec } from './transports/spec.js';

/** Plain JSON: what a consumer process needs to start. */
export interface WorkerConfig {
  workerId: string;
  transport: TransportSpec;
  source: string;
  scope: string;
  storeUrl: string;
  storePrefix: string;
  ledgerUrl: string;
  ledgerPrefix: string;
  concurrency: number;
  leaseMs: number;
  heartbeat: boolean;
  maxAttempts: number;
  retryBaseDelayMs: number;
  /** Handler work when the body does not say otherwise. */
  workMs: number;
  /** Handler work on a record's first attempt, when it differs from `workMs`. */
  firstAttemptWorkMs?: number;
  storeErrorRetryDelayMs: number;
}

/** What the publisher puts in every healthy or poison body. */
export interface ChaosBody {
  /** Poison: the handler always throws. */
  poison?: boolean;
  /** Handler work for this message, overriding the worker's `workMs`. */
  workMs?: number;
}

export interface RunningWorker {
  /** Graceful stop: drain, then close connections. */
  stop(): Promise<void>;
  /** Simulated crash (in-process only): handlers freeze, the store hangs, the connection drops. */
  crash(): Promise<void>;
  /** Cuts the transport's TCP connections, when the transport can do it from inside. */
  cutConnections(): number;
  /** After a simulated crash: closes what the frozen worker still holds, once the run is over. */
  dispose(): Promise<void>;
}

const never = () => new Promise<never>(() => undefined);

/** `openStore`: the store instead of the config's Redis store (in-process only). */
export async function startWorker(
  config: WorkerConfig,
  broker?: MemoryBroker,
  openStore?: () => Store,
): Promise<RunningWorker> {
  const ledger = new Ledger(config.ledgerUrl, config.ledgerPrefix);
  const inner =
    openStore?.() ??
    redisStore({ url: config.storeUrl, prefix: config.storePrefix, commandTimeoutMs: 1_000 });
  const store = trackedStore(inner, ledger);
  const { transport, cutConnections } = openTransport(config.transport, broker);
  let crashed = false;
  const consumer = createConsumer<ChaosBody>({
    transport,
    store,
    source: config.source,
    scope: config.scope,
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    heartbeat: config.heartbeat,
    storeErrorRetryDelayMs: config.storeErrorRetryDelayMs,
    inProgressRetryMaxDelayMs: config.leaseMs,
    retry: {
      maxAttempts: config.maxAttempts,
      baseDelayMs: config.retryBaseDelayMs,
      maxDelayMs: config.retryBaseDelayMs * 8,
      jitter: 'none',
    },
    drainTimeoutMs: 5_000,
    handler: async (message, ctx) => {
      if (crashed) return never();
      await ledger.beginExecution(message.requestId, ctx.fencingToken);
      // The work ignores ctx.signal on purpose: a zombie that runs on is what fencing must stop.
      const slowFirst = ctx.attempt === 1 ? config.firstAttemptWorkMs : undefined;
      await sleep(message.value?.workMs ?? slowFirst ?? config.workMs);
      if (crashed) return never();
      if (message.value?.poison) throw new Error('poison message: the handler always fails');
      const outcome = await ledger.commitEffect(message.requestId, ctx.fencingToken);
      if (outcome === 'stale') throw new Error('effect refused: a newer owner holds this id');
    },
  });
  const bump = (counter: (typeof Counters)[keyof typeof Counters]) => {
    if (!crashed) void ledger.bump(counter).catch(() => undefined);
  };
  const trail = (event: TrailEvent, requestId: string | undefined) => {
    if (!crashed && requestId !== undefined) {
      void ledger.noteTrail(requestId, event, config.workerId).catch(() => undefined);
    }
  };
  consumer.on('lease-lost', (event) => {
    bump(event.lease === 'store' ? Counters.leaseLostStore : Counters.leaseLostBroker);
    trail('lease-lost', event.requestId);
  });
  consumer.on('store-error', (event) => {
    bump(Counters.storeErrors);
    trail('store-error', event.requestId);
  });
  consumer.on('in-progress', (event) => trail('in-progress', event.requestId));
  consumer.on('retry', (event) => trail('retry', event.requestId));
  consumer.on('duplicate', () => bump(Counters.duplicatesSkipped));
  consumer.on('dead-letter', () => bump(Counters.deadLetterEvents));
  consumer.on('error', () => bump(Counters.transportErrors));
  await consumer.start();

  return {
    async stop() {
      await consumer.stop();
      await transport.close();
      await store.close();
      ledger.close();
    },
    async crash() {
      crashed = true;
      store.crash();
      // A dropped connection: the broker takes back every unsettled delivery.
      await transport.close();
    },
    cutConnections: () => cutConnections?.() ?? 0,
    async dispose() {
      await store.close().catch(() => undefined);
      ledger.close();
    },
  };
}
