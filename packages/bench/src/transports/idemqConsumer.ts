import { type ConsumedMessage, createConsumer, type Transport } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import type { SessionHandle } from '../childSession.js';
import {
  COUNTED_EVENTS,
  Completion,
  HandlerTally,
  noop,
  roundFigures,
  startRound,
} from './consumerKit.js';
import { RedisRoundMeter } from './redisRound.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from './types.js';

/** One consumer, connected once, then measured on source after source. */
export type ConsumerSession = SessionHandle<ConsumeRequest, ConsumeResult, ConsumerEnd>;

/**
 * idemq as users get it, on any transport: `createConsumer` over the transport it is given and
 * `redisStore({ client })`, `concurrency` as asked, all other options at their defaults (JSON
 * decoding, payload fingerprint, lease 40 s with heartbeat, COMPLETED kept 24 h, coalescing
 * on), and the no-op handler (`batch`: the same no-op on each item of a `batchHandler` call).
 * One transport and one store per session; one consumer per round, started on the round's source
 * and stopped after it.
 */
export class IdemqConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly transport: Transport,
    private readonly store: ReturnType<typeof redisStore>,
    private readonly redis: RedisRoundMeter,
  ) {}

  static async open(init: ConsumerInit, transport: Transport): Promise<IdemqConsumer> {
    const prefix = `${init.namespace}:idemq`;
    const redis = new RedisRoundMeter(init.endpoints.redisUrl, prefix);
    const store = redisStore({ client: redis.client, prefix });
    // Load the scripts and prove the server fits, as a user's startup would.
    await store.ready();
    return new IdemqConsumer(init, transport, store, redis);
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
    const settings = {
      transport: this.transport,
      store: this.store,
      source: request.source,
      scope: 'bench',
      concurrency: this.init.concurrency,
    };
    const handle = async (message: ConsumedMessage<unknown>) => {
      tally.add(message.requestId);
      await noop(message.body);
    };
    const consumer =
      this.init.consumer === 'batch'
        ? createConsumer({
            ...settings,
            // The same work per message, in one call per fetched batch.
            batchHandler: async (items) => {
              for (const { message } of items) await handle(message);
            },
          })
        : createConsumer({ ...settings, handler: handle });
    for (const name of COUNTED_EVENTS) {
      consumer.on(name, () => {
        events[name] = (events[name] ?? 0) + 1;
        completion.tick();
      });
    }

    await this.redis.start();
    const stats0 = this.store.stats();
    const start = startRound();
    try {
      await consumer.start();
      start.startedAt = performance.now();
      await completion.done;
      await this.redis.settled();
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if start() threw
      await consumer.stop();
    }
    // Measured up to the last settlement; the stop's drain is not part of it.
    const stats1 = this.store.stats();
    const redisFigures = await this.redis.end();
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
      ...redisFigures,
    };
  }

  async close(): Promise<ConsumerEnd> {
    await this.transport.close();
    await this.store.close();
    await this.redis.close();
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}
