import { ensureServices } from '@idemq/services';

// The bench tests measure against real Redis, RabbitMQ, Kafka, ElasticMQ and PostgreSQL (their env
// vars or 127.0.0.1): started when missing, never skipped.
export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres']);
}
