import { ensureServices } from '@idemq/services';

// The READMEs' examples talk to the real services on 127.0.0.1.
export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres']);
}
