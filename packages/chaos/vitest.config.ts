import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Builds dist/ (the consumer processes run it) and starts every broker when missing.
    globalSetup: ['test/globalSetup.ts'],
    // Fault runs share brokers and two cores: one file at a time.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 180_000,
    env: { AWS_EC2_METADATA_DISABLED: 'true' },
  },
});
