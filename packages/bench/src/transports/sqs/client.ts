import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import type { Endpoints } from '../types.js';

/**
 * The client configuration of every SQS client of the bench: the endpoint, a region and explicit
 * dummy credentials, so that the SDK never walks its default credential chain (which can end at
 * the EC2 instance-metadata endpoint).
 */
export function sqsClientConfig(endpoints: Endpoints): SQSClientConfig {
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  return {
    endpoint: endpoints.sqsEndpoint,
    region: endpoints.sqsRegion,
    credentials: { accessKeyId: 'idemq-bench', secretAccessKey: 'idemq-bench' },
  };
}

export function sqsClient(endpoints: Endpoints): SQSClient {
  return new SQSClient(sqsClientConfig(endpoints));
}
