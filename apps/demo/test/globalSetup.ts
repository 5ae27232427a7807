import { ensureServices } from '@idemq/services';

export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres']);
}
