import { ensureServices } from '@idemq/services';

// Starts whatever is missing (or only checks what REDIS_URL, AMQP_URL, KAFKA_BROKERS,
// SQS_ENDPOINT, POSTGRES_URL, REDIS_CLUSTER_NODES point to). A service that cannot be provided fails the run
// with what to install: these tests are never skipped quietly. The services stay up afterwards
// (fast re-runs); `pnpm services:down` stops them.
export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres', 'redis-cluster']);
}
