import { randomUUID } from 'node:crypto';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { serviceUrls } from '@idemq/services';
import {
  type DeclareQueueOptions,
  deadLetterNameOf,
  declareQueue,
  deleteQueue,
} from '../src/index.js';

// Belt and braces next to vitest.config.ts: the SDK never looks up instance metadata.
process.env.AWS_EC2_METADATA_DISABLED = 'true';

const { sqsEndpoint, sqsRegion } = serviceUrls();

/** Explicit endpoint, region and dummy credentials: no default provider chain, ever. */
export const clientConfig: SQSClientConfig = {
  endpoint: sqsEndpoint,
  region: sqsRegion,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
};

/** A client for the test's own admin calls (queue creation, inspection). */
export function adminClient(): SQSClient {
  return new SQSClient(clientConfig);
}

/** A queue name no other test or run uses. */
export function uniqueQueueName(prefix: string, fifo = false): string {
  const name = `${prefix}-${randomUUID().slice(0, 8)}-${Date.now().toString(36)}`;
  return fifo ? `${name}.fifo` : name;
}

/** Creates queues (with their DLQs) and deletes them all when asked. */
export class QueueFactory {
  private readonly created: string[] = [];

  constructor(private readonly client: SQSClient) {}

  /** A fresh queue and its `<name>-dlq`. */
  async create(name: string, options: DeclareQueueOptions = {}): Promise<string> {
    const declared = await declareQueue(this.client, name, {
      deadLetter: { name: deadLetterNameOf(name) },
      ...options,
    });
    this.created.push(declared.url);
    if (declared.deadLetterUrl) this.created.push(declared.deadLetterUrl);
    return declared.url;
  }

  /** The URL of a queue this factory created, by name. */
  async urlOf(name: string): Promise<string | undefined> {
    return this.created.find((url) => url.endsWith(`/${name}`));
  }

  async deleteAll(): Promise<void> {
    const urls = this.created.splice(0);
    await Promise.allSettled(urls.map((url) => deleteQueue(this.client, url)));
  }
}
