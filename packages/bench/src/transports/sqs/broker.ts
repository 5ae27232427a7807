import { GetQueueUrlCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  deadLetterNameOf,
  declareQueue,
  deleteQueue,
  MessageAttributeNames,
  queueDepth,
} from '@idemq/sqs';
import type { BenchBroker, QueuedMessage, SourceState } from '../broker.js';
import type { Endpoints } from '../types.js';
import { sqsClient } from './client.js';

/** Entries per `SendMessageBatch` (the SQS maximum) and batches sent at once while filling. */
const SEND_BATCH = 10;
const SENDS_AT_ONCE = 8;

/**
 * The bench's side of SQS: one fresh standard queue per round, declared with its `<name>-dlq`
 * as `declareQueue` makes them, filled with messages as the transport's `publish` sends them
 * (the requestId and content-type attributes, the JSON body as text), and deleted with its
 * dead-letter queue after the round.
 */
export class SqsBroker implements BenchBroker {
  private readonly urls = new Map<string, { url: string; deadLetterUrl: string | undefined }>();

  private constructor(
    private readonly client: SQSClient,
    readonly description: string,
  ) {}

  static async open(endpoints: Endpoints): Promise<SqsBroker> {
    return new SqsBroker(
      sqsClient(endpoints),
      `SQS API at ${endpoints.sqsEndpoint} (standard queues)`,
    );
  }

  async fill(source: string, messages: readonly QueuedMessage[]): Promise<void> {
    const { url, deadLetterUrl } = await declareQueue(this.client, source, { deadLetter: {} });
    this.urls.set(source, { url, deadLetterUrl });
    const batches: QueuedMessage[][] = [];
    for (let from = 0; from < messages.length; from += SEND_BATCH) {
      batches.push(messages.slice(from, from + SEND_BATCH));
    }
    let next = 0;
    const sender = async () => {
      while (next < batches.length) {
        const batch = batches[next++] as QueuedMessage[];
        const sent = await this.client.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map((message, i) => ({
              Id: String(i),
              MessageBody: message.body,
              MessageAttributes: {
                [MessageAttributeNames.requestId]: {
                  DataType: 'String',
                  StringValue: message.requestId,
                },
                [MessageAttributeNames.contentType]: {
                  DataType: 'String',
                  StringValue: 'application/json',
                },
              },
            })),
          }),
        );
        if ((sent.Failed ?? []).length > 0) {
          throw new Error(`SendMessageBatch to ${source} failed: ${JSON.stringify(sent.Failed)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: SENDS_AT_ONCE }, sender));
    const deadline = performance.now() + 10_000;
    for (;;) {
      const { ready } = await queueDepth(this.client, url);
      if (ready === messages.length) return;
      if (performance.now() > deadline) {
        throw new Error(`queue ${source} holds ${ready} messages, ${messages.length} were sent`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Messages still in the queue (visible or not), and in its dead-letter queue. */
  async inspect(source: string): Promise<SourceState> {
    const { url, deadLetterUrl } = await this.locate(source);
    if (!url || !deadLetterUrl) throw new Error(`the queues of ${source} do not exist`);
    const queue = await queueDepth(this.client, url);
    const deadLetters = await queueDepth(this.client, deadLetterUrl);
    return {
      left: queue.ready + queue.inFlight + queue.delayed,
      deadLetters: deadLetters.ready + deadLetters.inFlight + deadLetters.delayed,
    };
  }

  async remove(source: string): Promise<number> {
    const { url, deadLetterUrl } = await this.locate(source);
    let dropped = 0;
    for (const queueUrl of [url, deadLetterUrl]) {
      if (!queueUrl) continue;
      const depth = await queueDepth(this.client, queueUrl).catch(() => undefined);
      dropped += depth ? depth.ready + depth.inFlight + depth.delayed : 0;
      await deleteQueue(this.client, queueUrl);
    }
    this.urls.delete(source);
    return dropped;
  }

  /** Nothing to settle: `remove` deletes at once. */
  async settle(): Promise<void> {}

  async existing(sources: readonly string[]): Promise<string[]> {
    const left: string[] = [];
    for (const source of sources) {
      const { url, deadLetterUrl } = await this.locate(source);
      if (url || deadLetterUrl) left.push(source);
    }
    return left;
  }

  async close(): Promise<void> {
    for (const source of [...this.urls.keys()]) await this.remove(source).catch(() => 0);
    this.client.destroy();
  }

  /** The URLs of `source` and its dead-letter queue, `undefined` for one that does not exist. */
  private async locate(source: string) {
    const known = this.urls.get(source);
    if (known) return known;
    return {
      url: await this.urlOf(source),
      deadLetterUrl: await this.urlOf(deadLetterNameOf(source)),
    };
  }

  private async urlOf(name: string): Promise<string | undefined> {
    try {
      return (await this.client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    } catch (error) {
      if (error instanceof Error && /QueueDoesNotExist|NonExistentQueue/.test(error.name)) {
        return undefined;
      }
      throw error;
    }
  }
}
