import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real RabbitMQ and Redis: started when missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 30_000,
    // The files mostly wait on the broker and on timers: run them side by side even on 2 CPUs.
    maxWorkers: 4,
    hookTimeout: 60_000,
  },
});
