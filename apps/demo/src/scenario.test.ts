import { describe, expect, it } from 'vitest';
import { createScenario, type RunFigures } from './scenario.js';
import { violations } from './summary.js';

function expectCorrect(figures: RunFigures, lateDuplicatesPlanned: number): void {
  expect(violations(figures)).toEqual([]);
  expect(figures.processedTwice).toBe(0);
  expect(figures.lost).toBe(0);
  expect(figures.completed).toBe(figures.uniqueIds - figures.poison);
  expect(figures.deadLettered).toBe(figures.poison);
  expect(figures.lateDuplicates).toBe(lateDuplicatesPlanned);
  expect(figures.duplicatesSkipped).toBeGreaterThanOrEqual(figures.lateDuplicates);
  expect(figures.timedOut).toBe(false);
  expect(figures.errors + figures.leaseLost + figures.storeErrors).toBe(0);
}

function lateDuplicates(scenario: ReturnType<typeof createScenario>): number {
  return [...scenario.plan.duplicates.values()].filter((kind) => kind === 'after-completion')
    .length;
}

describe('the demo scenario', () => {
  it('processes 300 payments with duplicates, failures and poison exactly once', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 4,
      seed: 1234,
      timeoutMs: 30_000,
    });
    const figures = await scenario.run();
    expect(figures.uniqueIds).toBe(300);
    expect(figures.poison).toBe(3);
    expect(figures.sent).toBe(300 + scenario.plan.duplicates.size);
    expect(figures.retries).toBeGreaterThan(0);
    expectCorrect(figures, lateDuplicates(scenario));
  });

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

  it('stays correct when every payment is sent twice to one consumer', async () => {
    const scenario = createScenario({
      messages: 200,
      duplicates: 1,
      consumers: 1,
      seed: 99,
      timeoutMs: 30_000,
      poisonRate: 0.05,
    });
    const figures = await scenario.run();
    expect(figures.sent).toBe(400);
    expectCorrect(figures, lateDuplicates(scenario));
  });

  it('counts payments not settled when time runs out as lost', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 2,
      seed: 5,
      timeoutMs: 1,
    });
    const figures = await scenario.run();
    expect(figures.timedOut).toBe(true);
    expect(figures.lost).toBeGreaterThan(0);
    expect(violations(figures).join('\n')).toMatch(/neither completed nor dead-lettered/);
  });
});
