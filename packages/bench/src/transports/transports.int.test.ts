import { ensureServices } from '@idemq/services';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeMessages, openBroker } from './broker.js';
import {
  type ConsumerRow,
  possibleSources,
  runTransportBench,
  TRANSPORT_BENCH_DEFAULTS,
  type TransportReport,
  transportKeyPattern,
  transportNamespace,
} from './run.js';
import {
  CONSUMERS,
  type Endpoints,
  isIdemqConsumer,
  TRANSPORTS,
  type TransportSettings,
} from './types.js';

const D = TRANSPORT_BENCH_DEFAULTS;
const settings: TransportSettings = {
  queueType: D.queueType,
  partitions: D.partitions,
  sqsWaitTimeMs: D.sqsWaitTimeMs,
};

/**
 * The consumer benchmark's quick mode on every transport against the real broker and Redis,
 * asserting only what does not depend on the machine: every message consumed exactly once by
 * each consumer (the floors too), nothing left behind, and the Redis round trips per message.
 * Timing is never asserted here.
 */
describe.each(TRANSPORTS)('pnpm bench transports %s --quick', (transport) => {
  const namespace = transportNamespace();
  const concurrency = [...D.concurrency[transport]];
  const messagesAt = (c: number) => (c === 1 ? D.quickSequentialMessages : D.quickMessages);
  let endpoints: Endpoints;
  let report: TransportReport;
  const row = (consumer: ConsumerRow['consumer'], c: number) => {
    const found = report.rows.find((r) => r.consumer === consumer && r.concurrency === c);
    if (!found) throw new Error(`no row for ${consumer} at concurrency ${c}`);
    return found;
  };

  beforeAll(async () => {
    const urls = await ensureServices(['redis', transport]);
    endpoints = {
      redisUrl: urls.redis,
      amqpUrl: urls.amqp,
      kafkaBrokers: urls.kafkaBrokers,
      sqsEndpoint: urls.sqsEndpoint,
      sqsRegion: urls.sqsRegion,
    };
  }, 180_000);

  it('runs every consumer on pre-filled sources at each default concurrency', async () => {
    report = await runTransportBench({
      transport,
      endpoints,
      settings,
      messages: D.quickMessages,
      sequentialMessages: D.quickSequentialMessages,
      runs: D.quickRuns,
      concurrency,
      consumers: CONSUMERS,
      warmupMessages: 100,
      isolation: 'inline',
      stallTimeoutMs: D.stallTimeoutMs,
      namespace,
    });
    expect(report.rows.map((r) => `${r.consumer}/${r.concurrency}`)).toEqual(
      concurrency.flatMap((c) => CONSUMERS.map((consumer) => `${consumer}/${c}`)),
    );
  });

  it('consumes every message exactly once with each consumer', () => {
    for (const r of report.rows) {
      const where = `${r.consumer} concurrency ${r.concurrency}`;
      const n = messagesAt(r.concurrency);
      expect(r.anomalies, where).toEqual([]);
      expect(r.rounds, where).toHaveLength(D.quickRuns);
      for (const round of r.rounds) {
        expect(round.messages, where).toBe(n);
        expect(round.acked, where).toBe(n);
        expect(round.handlerRuns, where).toBe(n);
        expect(round.distinctIds, where).toBe(n);
        expect(round.duplicateRuns, where).toBe(0);
        if (isIdemqConsumer(r.consumer)) {
          // processed = N, and nothing else happened: no duplicate, retry or dead letter.
          expect(round.events, where).toEqual({ processed: n });
        }
        if (r.consumer !== 'raw') {
          expect(round.keysDeleted, where).toBe(n);
          // The server's CPU over the round: at least the commands this consumer sent.
          expect(round.redisCpuMicros, where).toBeGreaterThan(0);
        }
      }
    }
    expect(report.goals.find((g) => g.name.startsWith('every message'))?.met).toBe(true);
  });

  it('keeps idemq within 2 Redis round trips per message', () => {
    for (const c of concurrency) {
      const idemq = row('idemq', c);
      expect(idemq.roundTripsPerMessage).toBeGreaterThan(0);
      expect(idemq.roundTripsPerMessage).toBeLessThanOrEqual(2);
      // The store's own count agrees with the commands counted where they leave the client.
      const [round] = idemq.rounds;
      expect(round?.redisCommands?.total).toBe(round?.scriptCalls);
      expect(Object.keys(round?.redisCommands?.byName ?? {})).toEqual(['evalsha']);
      // One message at a time, nothing to coalesce: claim + complete.
      if (c === 1) expect(idemq.roundTripsPerMessage).toBe(2);
    }
    expect(report.goals.find((g) => g.name.startsWith('idemq Redis round trips'))?.met).toBe(true);
  });

  it('gives the hand-written consumer its two SETs per message and a ratio to raw', () => {
    for (const c of concurrency) {
      const hand = row('hand', c);
      const n = messagesAt(c);
      for (const round of hand.rounds) {
        expect(round.redisCommands, `concurrency ${c}`).toEqual({
          total: 2 * n,
          byName: { set: 2 * n },
        });
      }
      expect(hand.roundTripsPerMessage).toBe(2);
      expect(hand.vsRaw).toBeGreaterThan(0);
      expect(row('raw', c).vsRaw).toBeUndefined();
    }
  });

  it("gives the floors idemq's store calls: claim and complete, or the claim alone", () => {
    for (const c of concurrency) {
      for (const [consumer, perMessage] of [
        ['store', 2],
        ['claim', 1],
      ] as const) {
        const floor = row(consumer, c);
        const where = `${consumer} concurrency ${c}`;
        for (const round of floor.rounds) {
          expect(Object.keys(round.redisCommands?.byName ?? {}), where).toEqual(['evalsha']);
          expect(round.redisCommands?.total, where).toBe(round.storeRoundTrips);
        }
        // One message at a time, nothing to coalesce.
        if (c === 1) expect(floor.roundTripsPerMessage, where).toBe(perMessage);
        else expect(floor.roundTripsPerMessage, where).toBeLessThan(perMessage);
        expect(floor.vsRaw, where).toBeGreaterThan(0);
      }
    }
  });

  it('leaves nothing on the broker or in Redis', async () => {
    expect(report.leftovers).toEqual([]);
    const broker = await openBroker(transport, endpoints, settings);
    try {
      const sources = possibleSources(namespace, { concurrency, runs: D.quickRuns });
      expect(sources.length).toBeGreaterThan(0);
      expect(await broker.existing(sources)).toEqual([]);
      // The control: the same check sees a source that exists, and what removing it drops.
      const probe = `${namespace}-probe`;
      await broker.fill(probe, makeMessages(probe, 3));
      expect(await broker.existing([probe])).toEqual([probe]);
      expect(await broker.remove(probe)).toBe(3);
      await broker.settle();
      expect(await broker.existing([probe])).toEqual([]);
    } finally {
      await broker.close();
    }
    const redis = new Redis(endpoints.redisUrl, { maxRetriesPerRequest: 1 });
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
