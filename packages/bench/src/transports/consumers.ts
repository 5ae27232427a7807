import { type ConsumerEventName, createConsumer } from '@idemq/core';
import { rabbitmq } from '@idemq/rabbitmq';
import { redisStore } from '@idemq/redis';
import amqplib, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { Redis } from 'ioredis';
import { CommandCounter, countIoredis, diffCounts } from '../commandCounter.js';
import { deleteKeys, globEscape } from '../redisInfo.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from './types.js';

/** One consumer, connected once, then measured on queue after queue. */
export interface ConsumerSession {
  round(request: ConsumeRequest): Promise<ConsumeResult>;
  close(): Promise<ConsumerEnd>;
}

export function openConsumer(init: ConsumerInit): Promise<ConsumerSession> {
  return init.consumer === 'raw' ? RawConsumer.open(init) : IdemqConsumer.open(init);
}

/** The business handler of both consumers: does nothing. */
const noop = async (_body: Uint8Array): Promise<void> => {};

/** Counts handler runs and runs for a requestId seen before. */
class HandlerTally {
  runs = 0;
  duplicates = 0;
  private readonly seen = new Set<string>();

  add(requestId: string): void {
    this.runs += 1;
    if (this.seen.has(requestId)) this.duplicates += 1;
    else this.seen.add(requestId);
  }

  get distinct(): number {
    return this.seen.size;
  }
}

/**
 * Resolves once `target()` reaches `messages`; rejects when nothing moved for `stallMs`.
 * `tick()` is called on every settlement.
 */
class Completion {
  private resolve: (() => void) | undefined;
  private reject: ((error: Error) => void) | undefined;
  private lastProgress = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** performance.now() and process.cpuUsage() when `messages` was reached. */
  endedAt = Number.NaN;
  endedCpu: NodeJS.CpuUsage = { user: Number.NaN, system: Number.NaN };
  readonly done: Promise<void>;

  constructor(
    private readonly messages: number,
    private readonly count: () => number,
    stallMs: number,
    describe: () => string,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Awaited by the round; a failure after the round gave up waiting is not unhandled.
    this.done.catch(() => undefined);
    this.timer = setInterval(
      () => {
        if (performance.now() - this.lastProgress > stallMs) {
          this.fail(new Error(`no progress for ${stallMs} ms: ${describe()}`));
        }
      },
      Math.min(1_000, stallMs),
    );
  }

  tick(): void {
    this.lastProgress = performance.now();
    if (this.count() >= this.messages && this.resolve) {
      this.endedAt = this.lastProgress;
      this.endedCpu = process.cpuUsage();
      this.resolve();
      this.settle();
    }
  }

  /** The CPU time between `cpu0` and the moment `messages` was reached. */
  cpuSince(cpu0: NodeJS.CpuUsage): number {
    return this.endedCpu.user - cpu0.user + (this.endedCpu.system - cpu0.system);
  }

  fail(error: Error): void {
    this.reject?.(error);
    this.settle();
  }

  private settle(): void {
    this.resolve = undefined;
    this.reject = undefined;
    clearInterval(this.timer);
  }
}

/**
 * amqplib as one would write it by hand: a channel with `prefetch(P)`, `consume` with manual
 * acks, the no-op handler awaited, then `channel.ack`. Nothing else: no decoding, no
 * idempotency.
 */
class RawConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly connection: ChannelModel,
  ) {}

  static async open(init: ConsumerInit): Promise<RawConsumer> {
    const connection = await amqplib.connect(init.amqpUrl, {
      clientProperties: { connection_name: 'idemq-bench raw' },
    });
    connection.on('error', () => undefined); // a failed round reports its own error
    return new RawConsumer(init, connection);
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    await channel.prefetch(this.init.prefetch, false);
    const tally = new HandlerTally();
    let acked = 0;
    const completion = new Completion(
      request.messages,
      () => acked,
      request.stallTimeoutMs,
      () => `raw consumer acked ${acked}/${request.messages} from ${request.queue}`,
    );
    const onMessage = async (message: ConsumeMessage | null) => {
      if (message === null) {
        completion.fail(new Error(`the broker cancelled the consumer of ${request.queue}`));
        return;
      }
      try {
        tally.add(String(message.properties.messageId));
        await noop(message.content);
        channel.ack(message);
        acked += 1;
        completion.tick();
      } catch (error) {
        completion.fail(error instanceof Error ? error : new Error(String(error)));
      }
    };

    collectGarbage();
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    let consumerTag: string | undefined;
    try {
      ({ consumerTag } = await channel.consume(request.queue, onMessage, { noAck: false }));
      await completion.done;
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if consume() threw
      if (consumerTag !== undefined) await channel.cancel(consumerTag).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    const ms = completion.endedAt - started;
    return {
      run: request.run,
      queue: request.queue,
      messages: request.messages,
      ms,
      messagesPerSecond: request.messages / (ms / 1_000),
      acked,
      handlerRuns: tally.runs,
      distinctIds: tally.distinct,
      duplicateRuns: tally.duplicates,
      events: {},
      cpuMicros: completion.cpuSince(cpu0),
    };
  }

  async close(): Promise<ConsumerEnd> {
    await this.connection.close().catch(() => undefined);
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}

/** Consumer events counted per round (`lease-extended` never fires in a round this short). */
const COUNTED_EVENTS = [
  'processed',
  'duplicate',
  'in-progress',
  'retry',
  'dead-letter',
  'lease-lost',
  'store-error',
  'error',
] as const satisfies readonly ConsumerEventName[];

/**
 * idemq as users get it: `createConsumer` over `rabbitmq({ url })` (quorum queues by default)
 * and `redisStore({ client })`, `concurrency: P` (the transport sets prefetch = P), all other
 * options at their defaults (JSON decoding, payload fingerprint, lease 40 s with heartbeat,
 * COMPLETED kept 24 h, coalescing on), and the no-op handler. One transport and one store per
 * session; one consumer per round, started on the round's queue and stopped after it.
 */
class IdemqConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly transport: ReturnType<typeof rabbitmq>,
    private readonly store: ReturnType<typeof redisStore>,
    private readonly client: Redis,
    private readonly sent: CommandCounter,
    private readonly admin: Redis,
    private readonly prefix: string,
  ) {}

  static async open(init: ConsumerInit): Promise<IdemqConsumer> {
    const sent = new CommandCounter();
    const client = countIoredis(new Redis(init.redisUrl, { maxRetriesPerRequest: 1 }), sent);
    const admin = new Redis(init.redisUrl, { maxRetriesPerRequest: 1 });
    const prefix = `${init.namespace}:idemq`;
    const store = redisStore({ client, prefix });
    // Load the scripts and prove the server fits, as a user's startup would.
    await store.ready();
    const transport = rabbitmq({
      url: init.amqpUrl,
      queueType: init.queueType,
      connectionName: 'idemq-bench idemq',
    });
    return new IdemqConsumer(init, transport, store, client, sent, admin, prefix);
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const tally = new HandlerTally();
    const events: Record<string, number> = {};
    const settled = () =>
      (events.processed ?? 0) + (events.duplicate ?? 0) + (events['dead-letter'] ?? 0);
    const completion = new Completion(
      request.messages,
      settled,
      request.stallTimeoutMs,
      () => `idemq consumer settled ${settled()}/${request.messages} from ${request.queue}`,
    );
    const consumer = createConsumer({
      transport: this.transport,
      store: this.store,
      // The queue of the default group is named like the source: the queue the bench filled.
      source: request.queue,
      scope: 'bench',
      concurrency: this.init.prefetch,
      handler: async (message) => {
        tally.add(message.requestId);
        await noop(message.body);
      },
    });
    for (const name of COUNTED_EVENTS) {
      consumer.on(name, () => {
        events[name] = (events[name] ?? 0) + 1;
        completion.tick();
      });
    }

    collectGarbage();
    const stats0 = this.store.stats();
    const sent0 = this.sent.snapshot();
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    try {
      await consumer.start();
      await completion.done;
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if start() threw
      await consumer.stop();
    }
    // Measured up to the last ack; the stop's drain is not part of it.
    const ms = completion.endedAt - started;
    const stats1 = this.store.stats();
    const sent1 = this.sent.snapshot();
    const keysDeleted = await deleteKeys(this.admin, [`${globEscape(this.prefix)}:*`]);
    return {
      run: request.run,
      queue: request.queue,
      messages: request.messages,
      ms,
      messagesPerSecond: request.messages / (ms / 1_000),
      acked: (events.processed ?? 0) + (events.duplicate ?? 0),
      handlerRuns: tally.runs,
      distinctIds: tally.distinct,
      duplicateRuns: tally.duplicates,
      events,
      scriptCalls: stats1.scriptCalls - stats0.scriptCalls,
      storeRoundTrips: stats1.roundTrips - stats0.roundTrips,
      redisCommands: diffCounts(sent1, sent0),
      keysDeleted,
      cpuMicros: completion.cpuSince(cpu0),
    };
  }

  async close(): Promise<ConsumerEnd> {
    await this.transport.close();
    await this.store.close();
    await this.client.quit().catch(() => this.client.disconnect());
    await this.admin.quit().catch(() => this.admin.disconnect());
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}

/** Starts each round with a clean heap where the process allows it (`--expose-gc`). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
}
