import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
