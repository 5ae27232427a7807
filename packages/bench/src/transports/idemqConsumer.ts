import { createConsumer, type Transport } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { Redis } from 'ioredis';
import type { SessionHandle } from '../childSession.js';
import { CommandCounter, countIoredis, diffCounts } from '../commandCounter.js';
import { deleteKeys, globEscape, serverCpuMicros } from '../redisInfo.js';
import {
  COUNTED_EVENTS,
  Completion,
  HandlerTally,
  noop,
  roundFigures,
  startRound,
} from './consumerKit.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from './types.js';

/** One consumer, connected once, then measured on source after source. */
export type ConsumerSession = SessionHandle<ConsumeRequest, ConsumeResult, ConsumerEnd>;

/**
 * idemq as users get it, on any transport: `createConsumer` over the transport it is given and
 * `redisStore({ client })`, `concurrency` as asked, all other options at their defaults (JSON
 * decoding, payload fingerprint, lease 40 s with heartbeat, COMPLETED kept 24 h, coalescing
 * on), and the no-op handler. One transport and one store per session; one consumer per round,
 * started on the round's source and stopped after it.
 */
export class IdemqConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly transport: Transport,
    private readonly store: ReturnType<typeof redisStore>,
    private readonly client: Redis,
    private readonly sent: CommandCounter,
    private readonly admin: Redis,
    private readonly prefix: string,
  ) {}

  static async open(init: ConsumerInit, transport: Transport): Promise<IdemqConsumer> {
    const sent = new CommandCounter();
    const client = countIoredis(
      new Redis(init.endpoints.redisUrl, { maxRetriesPerRequest: 1 }),
      sent,
    );
    const admin = new Redis(init.endpoints.redisUrl, { maxRetriesPerRequest: 1 });
    const prefix = `${init.namespace}:idemq`;
    const store = redisStore({ client, prefix });
    // Load the scripts and prove the server fits, as a user's startup would.
    await store.ready();
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
      () =>
        `idemq consumer settled ${settled()}/${request.messages} from ${request.source}, ` +
        `events ${JSON.stringify(events)}`,
    );
    const consumer = createConsumer({
      transport: this.transport,
      store: this.store,
      source: request.source,
      scope: 'bench',
      concurrency: this.init.concurrency,
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

    const redisCpu0 = await serverCpuMicros(this.admin);
    const stats0 = this.store.stats();
    const sent0 = this.sent.snapshot();
    const start = startRound();
    let redisCpu1 = Number.NaN;
    try {
      await consumer.start();
      start.startedAt = performance.now();
      await completion.done;
      redisCpu1 = await serverCpuMicros(this.admin);
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if start() threw
      await consumer.stop();
    }
    // Measured up to the last settlement; the stop's drain is not part of it.
    const stats1 = this.store.stats();
    const sent1 = this.sent.snapshot();
    const keysDeleted = await deleteKeys(this.admin, [`${globEscape(this.prefix)}:*`]);
    return {
      ...roundFigures(
        request,
        start,
        completion,
        tally,
        (events.processed ?? 0) + (events.duplicate ?? 0),
      ),
      events,
      scriptCalls: stats1.scriptCalls - stats0.scriptCalls,
      storeRoundTrips: stats1.roundTrips - stats0.roundTrips,
      redisCommands: diffCounts(sent1, sent0),
      redisCpuMicros: redisCpu1 - redisCpu0,
      keysDeleted,
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
