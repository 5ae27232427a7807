import { describe, expect, it } from 'vitest';
import { createScenario } from '../src/scenario.js';
import { expectCorrect, lateDuplicates } from './scenarioChecks.js';

describe('the demo scenario on the real services', () => {
  it('processes 300 payments exactly once with the real Redis store', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 4,
      seed: 99,
      timeoutMs: 30_000,
      store: 'redis',
    });
    const figures = await scenario.run();
    expect(figures.store).toBe('redis');
    expectCorrect(figures, lateDuplicates(scenario));
  });

  const brokers = [
    { transport: 'rabbitmq', name: 'RabbitMQ', seed: 7, timeoutMs: 40_000 },
    { transport: 'kafka', name: 'Kafka', seed: 11, timeoutMs: 50_000 },
    { transport: 'sqs', name: 'SQS (ElasticMQ)', seed: 13, timeoutMs: 50_000 },
  ] as const;

  for (const { transport, name, seed, timeoutMs } of brokers) {
    it(`processes 200 payments exactly once on real ${name} with the Redis store`, async () => {
      const scenario = createScenario({
        messages: 200,
        duplicates: 0.25,
        consumers: 3,
        seed,
        timeoutMs,
        transport,
        store: 'redis',
      });
      const figures = await scenario.run();
      expect(figures.transport).toBe(transport);
      expectCorrect(figures, lateDuplicates(scenario));
    });
  }
});
