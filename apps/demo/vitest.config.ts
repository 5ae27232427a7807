import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    // The `--store redis` scenario runs against a real Redis: started when missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
  },
});
