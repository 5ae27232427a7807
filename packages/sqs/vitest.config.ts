import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real ElasticMQ (and Redis, for the cross-process tests) on 127.0.0.1, started when missing.
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 30_000,
    // The files mostly wait on the broker's clock (visibility timeouts), not on the CPU.
    maxWorkers: 3,
    hookTimeout: 60_000,
    // The AWS SDK must never try the EC2 instance-metadata endpoint (169.254.169.254).
    env: { AWS_EC2_METADATA_DISABLED: 'true' },
  },
});
