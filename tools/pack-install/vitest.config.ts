import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Redis, RabbitMQ, Kafka and ElasticMQ: started when missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
    // Packing and an npm install from the registry come first.
    testTimeout: 180_000,
    hookTimeout: 600_000,
  },
});
