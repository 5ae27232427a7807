import { ensureServices } from '@idemq/services';

// A real PostgreSQL, and RabbitMQ for the transactional consumer tests, on 127.0.0.1 (or
// POSTGRES_URL / AMQP_URL): started when missing, never skipped.
export default async function setup(): Promise<void> {
  await ensureServices(['postgres', 'rabbitmq']);
}
