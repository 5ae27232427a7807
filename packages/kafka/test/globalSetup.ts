import { ensureServices } from '@idemq/services';

// Real Kafka (KRaft) and Redis on 127.0.0.1 (or KAFKA_BROKERS / REDIS_URL): started when
// missing, never skipped.
export default async function setup(): Promise<void> {
  await ensureServices(['kafka', 'redis']);
}
