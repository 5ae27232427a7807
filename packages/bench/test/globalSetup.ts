import { ensureServices } from '@idemq/services';

// The bench test measures against a real Redis (REDIS_URL or 127.0.0.1:6379): started when
// missing, never skipped.
export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'rabbitmq', 'kafka']);
}
