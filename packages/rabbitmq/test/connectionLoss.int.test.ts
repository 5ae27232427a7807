import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Consumer, createConsumer, type Logger } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import amqplib from 'amqplib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type QueueType, rabbitmq } from '../src/index.js';
import { BrokerAdmin, cuttableConnections } from './broker.js';

const KILLS = 2;
/** Published per batch, one batch every PACE_MS: about 200 messages a second. */
const BATCH = 10;
const PACE_MS = 50;

/** Counts what the transport logs: reconnections, re-subscriptions, republished messages. */
function countingLogger(): Logger & { count(text: string): number } {
  const seen = new Map<string, number>();
  const note = (_obj: object, msg?: string) => {
    if (msg !== undefined) seen.set(msg, (seen.get(msg) ?? 0) + 1);
  };
  return {
    debug: note,
    info: note,
    warn: note,
    error: note,
    count: (text) =>
      [...seen].filter(([msg]) => msg.includes(text)).reduce((sum, [, n]) => sum + n, 0),
  };
}

describe.each<QueueType>(['quorum', 'classic'])('connection loss (%s queues)', (queueType) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    cleanup.length = 0;
  });

  it('consumers and the publisher recover from close_all_connections mid-run: nothing lost, nothing completed twice', async () => {
    const { faultsUrl, vhosts } = inject('amqp');
    const admin = vhosts === undefined ? undefined : BrokerAdmin.local();
    // Without rabbitmqctl (a remote broker): cut the sockets instead, as a network failure would.
    const connections = cuttableConnections(faultsUrl);
    const kill = async () => {
      if (admin && vhosts)
        return admin.closeAllConnections(vhosts.faults, 'idemq connection-loss test');
      connections.cut();
    };

    const logger = countingLogger();
    const options = {
      connection: connections.connect,
      queueType,
      connectTimeoutMs: 20_000,
      reconnect: { initialDelayMs: 50, maxDelayMs: 1_000 },
      logger,
    };
    const store = redisStore({ url: inject('redisUrl'), prefix: `idemq-test-${randomUUID()}` });
    cleanup.push(() => store.close());
    const source = `loss-${queueType}-${randomUUID().slice(0, 8)}`;

    const completions = new Map<string, number>();
    const processed = new Map<string, number>();
    const processedAfterKill = new Set<number>();
    let killed = false;
    let duplicates = 0;
    let errors = 0;
    let deliveries = 0;
    const consumers: Consumer[] = [];
    for (let i = 0; i < 3; i++) {
      const transport = rabbitmq(options);
      cleanup.push(() => transport.close());
      const counted = {
        ...transport,
        subscribe: (request: Parameters<typeof transport.subscribe>[0]) =>
          transport.subscribe({
            ...request,
            onDelivery: (d) => {
              deliveries++;
              request.onDelivery(d);
            },
          }),
      };
      const consumer = createConsumer({
        transport: counted,
        store,
        source,
        scope: 'connection-loss',
        concurrency: 8,
        leaseMs: 5_000,
        inProgressRetryMaxDelayMs: 300,
        retry: { baseDelayMs: 50, maxDelayMs: 300 },
        handler: async (message) => {
          // Slow enough that a kill always finds handlers running (3 consumers × 8 at a time).
          await sleep(40 + Math.random() * 40);
          completions.set(message.requestId, (completions.get(message.requestId) ?? 0) + 1);
        },
      });
      consumer.on('processed', ({ requestId }) => {
        processed.set(requestId, (processed.get(requestId) ?? 0) + 1);
        if (killed) processedAfterKill.add(i);
      });
      consumer.on('duplicate', () => duplicates++);
      consumer.on('error', () => errors++);
      cleanup.push(() => consumer.stop({ timeoutMs: 2_000 }));
      consumers.push(consumer);
    }
    await Promise.all(consumers.map((c) => c.start()));

    const publisher = rabbitmq(options);
    cleanup.push(() => publisher.close());
    const startedAt = performance.now();
    const ids: string[] = [];
    const publishes: Promise<unknown>[] = [];
    let publishing = true;
    // Publishes go on all the time, so the kills land on publishes and handlers in flight.
    const stream = (async () => {
      while (publishing) {
        for (let i = 0; i < BATCH; i++) {
          const id = `loss-${ids.length}-${randomUUID()}`;
          ids.push(id);
          publishes.push(publisher.publish(source, { requestId: id, body: { n: ids.length } }));
        }
        await sleep(PACE_MS);
      }
    })();
    const recoveryMs: number[] = [];
    const healthSeen: string[][][] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(500);
      expect(consumers.map((c) => c.health().status)).toEqual(['up', 'up', 'up']);
      const resubscribed = logger.count('consuming again');
      killed = true;
      await kill();
      const killedAt = performance.now();
      const seen = consumers.map(() => new Set<string>());
      // Recovered: every consumer consumes again before the next kill.
      while (logger.count('consuming again') < resubscribed + 3) {
        for (const [i, c] of consumers.entries()) seen[i]?.add(c.health().status);
        await sleep(1);
      }
      recoveryMs.push(Math.round(performance.now() - killedAt));
      healthSeen.push(seen.map((statuses) => [...statuses].sort()));
    }
    // While reconnecting each consumer said degraded, never down; consuming again, up.
    for (const kill of healthSeen) {
      for (const statuses of kill) {
        expect(statuses).toContain('degraded');
        expect(statuses).not.toContain('down');
      }
    }
    expect(consumers.map((c) => c.health().status)).toEqual(['up', 'up', 'up']);
    await sleep(500);
    publishing = false;
    await stream;
    const outcomes = await Promise.allSettled(publishes);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);

    const deadline = performance.now() + 40_000;
    while (ids.some((id) => !processed.has(id)) && performance.now() < deadline) await sleep(50);
    const elapsedMs = performance.now() - startedAt;
    await sleep(1_000); // let late duplicates (republished or redelivered copies) arrive

    const lost = ids.filter((id) => !processed.has(id));
    const twice = [...completions].filter(([, n]) => n > 1);
    const processedTwice = [...processed].filter(([, n]) => n > 1);
    const figures = {
      queueType,
      messages: ids.length,
      kills: KILLS,
      elapsedMs: Math.round(elapsedMs),
      deliveries,
      duplicates,
      consumerErrors: errors,
      reconnects: logger.count('reconnected'),
      resubscribed: logger.count('consuming again'),
      republished: logger.count('sending again'),
      recoveryMs,
      // A 406 (a tag of a dead channel acked on a new one, say) would show as a channel error.
      channelErrors: logger.count('channel error'),
      consumersProcessingAfterKill: processedAfterKill.size,
    };
    console.info(`[connection loss] ${JSON.stringify(figures)}`);

    expect(lost, 'lost messages').toEqual([]);
    expect(twice, 'handlers completed twice').toEqual([]);
    expect(processedTwice, 'processed twice').toEqual([]);
    expect(figures.reconnects).toBeGreaterThanOrEqual(4 * KILLS);
    expect(processedAfterKill.size, 'consumers processing after the kills').toBe(3);
    expect(figures.channelErrors, 'channel errors').toBe(0);

    // Nothing dead-lettered, nothing left behind in the source queue.
    const probe = await amqplib.connect(faultsUrl);
    cleanup.push(() => probe.close());
    const channel = await probe.createChannel();
    const depth = async (queue: string) => (await channel.checkQueue(queue)).messageCount;
    expect(await depth(`${source}.dlq`)).toBe(0);
    const drained = performance.now() + 10_000;
    while ((await depth(source)) > 0 && performance.now() < drained) await sleep(100);
    expect(await depth(source)).toBe(0);
  }, 60_000);
});
