import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    // Scenarios on Redis and RabbitMQ run against the real services: started when missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
  },
});
