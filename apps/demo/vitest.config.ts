import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    // Scenarios on Redis, the brokers and PostgreSQL run against the real services: started when
    // missing, never skipped.
    globalSetup: ['test/globalSetup.ts'],
    // The AWS SDK must never try the EC2 instance-metadata endpoint (169.254.169.254).
    env: { AWS_EC2_METADATA_DISABLED: 'true' },
  },
});
