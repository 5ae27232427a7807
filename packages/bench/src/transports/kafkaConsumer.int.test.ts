import { ensureServices } from '@idemq/services';
import { beforeAll, describe, expect, it } from 'vitest';
import { runKafkaConsumerBench } from './kafkaConsumer.js';

// Machine-independent figures only: exactly-once handling and Redis round trips per message.
describe('Kafka consumer benchmark', () => {
  let brokers: string[] = [];
  let redisUrl = '';

  beforeAll(async () => {
    const urls = await ensureServices(['kafka', 'redis']);
    brokers = urls.kafkaBrokers;
    redisUrl = urls.redis;
  });

  it('handles every message exactly once with both consumers, idemq in ≤ 2 round trips each', async () => {
    const messages = 2_000;
    const result = await runKafkaConsumerBench({
      messages,
      partitions: 6,
      concurrency: 64,
      runs: 1,
      brokers,
      redisUrl,
    });

    expect(result.rounds.map((round) => round.contender).sort()).toEqual(['idemq', 'raw']);
    for (const round of result.rounds) {
      expect(round.handlerRuns, round.contender).toBe(messages);
      expect(round.distinctIds, round.contender).toBe(messages);
      expect(round.duplicateRuns, round.contender).toBe(0);
    }
    const idemq = result.rounds.find((round) => round.contender === 'idemq');
    expect(idemq?.events).toEqual({ processed: messages });
    expect(result.exactlyOnce).toBe(true);
    expect(result.roundTripsPerMessage).toBeGreaterThan(0);
    expect(result.roundTripsPerMessage).toBeLessThanOrEqual(2);
  });
});
