import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The tests import the package by its name, as other workspace packages do.
    alias: { '@idemq/services': fileURLToPath(new URL('./src/index.mjs', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.int.test.ts'],
    // Starts (or checks) every service once, before any test file runs.
    globalSetup: ['./test/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The AWS SDK must never try the EC2 metadata endpoint (169.254.169.254).
    env: { AWS_EC2_METADATA_DISABLED: 'true', KAFKAJS_NO_PARTITIONER_WARNING: '1' },
  },
});
