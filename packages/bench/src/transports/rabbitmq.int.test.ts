import { ensureServices, serviceUrls } from '@idemq/services';
import amqplib from 'amqplib';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsumerRow,
  possibleSources,
  RABBITMQ_BENCH_DEFAULTS,
  runRabbitmqBench,
  type TransportReport,
  transportKeyPattern,
  transportNamespace,
} from './rabbitmq.js';

const D = RABBITMQ_BENCH_DEFAULTS;

/**
 * The consumer benchmark's quick mode against the real RabbitMQ and Redis, asserting only what
 * does not depend on the machine: every message consumed exactly once by each consumer, nothing
 * left behind, and idemq's Redis round trips per message. Timing is never asserted here.
 */
describe('pnpm bench transports rabbitmq --quick', () => {
  const urls = serviceUrls();
  const namespace = transportNamespace();
  let report: TransportReport;
  const row = (consumer: ConsumerRow['consumer'], prefetch: number) => {
    const found = report.rows.find((r) => r.consumer === consumer && r.prefetch === prefetch);
    if (!found) throw new Error(`no row for ${consumer} at prefetch ${prefetch}`);
    return found;
  };
  const messagesAt = (prefetch: number) =>
    prefetch === 1 ? D.quickSequentialMessages : D.quickMessages;

  beforeAll(async () => {
    // The package's global setup starts Redis; this benchmark needs the broker too.
    await ensureServices(['redis', 'rabbitmq']);
  }, 180_000);

  it('runs both consumers on pre-filled queues at prefetch 64 and 1', async () => {
    report = await runRabbitmqBench({
      amqpUrl: urls.amqp,
      redisUrl: urls.redis,
      messages: D.quickMessages,
      sequentialMessages: D.quickSequentialMessages,
      runs: D.quickRuns,
      prefetch: [...D.prefetch],
      queueType: D.queueType,
      warmupMessages: 100,
      isolation: 'inline',
      stallTimeoutMs: D.stallTimeoutMs,
      namespace,
    });
    expect(report.rows.map((r) => `${r.consumer}/${r.prefetch}`)).toEqual([
      'raw/64',
      'idemq/64',
      'raw/1',
      'idemq/1',
    ]);
  });

  it('consumes every message exactly once with each consumer', () => {
    for (const r of report.rows) {
      const where = `${r.consumer} prefetch ${r.prefetch}`;
      const n = messagesAt(r.prefetch);
      expect(r.anomalies, where).toEqual([]);
      expect(r.rounds, where).toHaveLength(D.quickRuns);
      for (const round of r.rounds) {
        expect(round.messages, where).toBe(n);
        expect(round.acked, where).toBe(n);
        expect(round.handlerRuns, where).toBe(n);
        expect(round.distinctIds, where).toBe(n);
        expect(round.duplicateRuns, where).toBe(0);
        if (r.consumer === 'idemq') {
          // processed = N, and nothing else happened: no duplicate, retry or dead letter.
          expect(round.events, where).toEqual({ processed: n });
          expect(round.keysDeleted, where).toBe(n);
        }
      }
    }
  });

  it('keeps idemq within 2 Redis round trips per message, exactly 2 one at a time', () => {
    for (const prefetch of D.prefetch) {
      const idemq = row('idemq', prefetch);
      expect(idemq.roundTripsPerMessage).toBeGreaterThan(0);
      expect(idemq.roundTripsPerMessage).toBeLessThanOrEqual(2);
      expect(idemq.scriptCallsPerMessage).toBeLessThanOrEqual(2);
      // The store's own count agrees with the commands counted where they leave the client.
      const [round] = idemq.rounds;
      expect(round?.redisCommands?.total).toBe(round?.scriptCalls);
      expect(Object.keys(round?.redisCommands?.byName ?? {})).toEqual(['evalsha']);
    }
    // Prefetch 1: one message at a time, nothing to coalesce: claim + complete.
    expect(row('idemq', 1).roundTripsPerMessage).toBe(2);
    expect(row('idemq', 1).scriptCallsPerMessage).toBe(2);
    const goal = report.goals.find((g) => g.name.startsWith('idemq Redis round trips'));
    expect(goal?.met).toBe(true);
  });

  it('leaves nothing on the broker or in Redis', async () => {
    expect(report.leftovers).toEqual([]);
    const connection = await amqplib.connect(urls.amqp);
    connection.on('error', () => undefined);
    try {
      const sources = possibleSources(namespace, { prefetch: [...D.prefetch], runs: D.quickRuns });
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        for (const queue of [source, `${source}.dlq`]) {
          const channel = await connection.createChannel();
          channel.on('error', () => undefined);
          const exists = await channel.checkQueue(queue).then(
            () => true,
            () => false,
          );
          await channel.close().catch(() => undefined);
          expect(exists, queue).toBe(false);
        }
      }
    } finally {
      await connection.close();
    }
    const redis = new Redis(urls.redis, { maxRetriesPerRequest: 1 });
    try {
      const [, keys] = await redis.scan(
        '0',
        'MATCH',
        transportKeyPattern(namespace),
        'COUNT',
        10_000,
      );
      expect(keys).toEqual([]);
    } finally {
      await redis.quit();
    }
  });
});
