import { ensureServices } from '@idemq/services';

// ElasticMQ for SQS and Redis for the shared store of the cross-process tests: started when
// missing (or only checked where SQS_ENDPOINT / REDIS_URL point), never skipped.
export default async function setup(): Promise<void> {
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  await ensureServices(['sqs', 'redis']);
}
