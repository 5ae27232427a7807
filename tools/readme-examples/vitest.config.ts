import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Redis, RabbitMQ, Kafka and ElasticMQ: started when missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
    // Each example type-checks against its package's types and runs in a process of its own.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
