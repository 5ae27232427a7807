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

  it('processes 200 payments exactly once on real RabbitMQ with the Redis store', async () => {
    const scenario = createScenario({
      messages: 200,
      duplicates: 0.25,
      consumers: 3,
      seed: 7,
      timeoutMs: 40_000,
      transport: 'rabbitmq',
      store: 'redis',
    });
    const figures = await scenario.run();
    expect(figures.transport).toBe('rabbitmq');
    expectCorrect(figures, lateDuplicates(scenario));
  });

  it('processes 200 payments exactly once on real Kafka with the Redis store', async () => {
    const scenario = createScenario({
      messages: 200,
      duplicates: 0.25,
      consumers: 3,
      seed: 11,
      timeoutMs: 50_000,
      transport: 'kafka',
      store: 'redis',
    });
    const figures = await scenario.run();
    expect(figures.transport).toBe('kafka');
    expectCorrect(figures, lateDuplicates(scenario));
  });

  it('processes 200 payments exactly once on real SQS (ElasticMQ) with the Redis store', async () => {
    const scenario = createScenario({
      messages: 200,
      duplicates: 0.25,
      consumers: 3,
      seed: 13,
      timeoutMs: 50_000,
      transport: 'sqs',
      store: 'redis',
    });
    const figures = await scenario.run();
    expect(figures.transport).toBe('sqs');
    expectCorrect(figures, lateDuplicates(scenario));
  });
});
