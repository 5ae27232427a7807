import {
  DeleteMessageBatchCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { MessageAttributeNames, type SqsTransport, sqs } from '@idemq/sqs';
import { type HandlerTally, RawRound, startRound } from '../consumerKit.js';
import { handleRaw, type RawGuard } from '../handRolled.js';
import type { ConsumerSession } from '../idemqConsumer.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from '../types.js';
import { sqsClient, sqsClientConfig } from './client.js';

/** Most messages one `ReceiveMessage` returns (and one `DeleteMessageBatch` takes). */
const MAX_BATCH = 10;

/** idemq's transport: `sqs({ clientConfig })`, with the long-poll time both consumers use. */
export function idemqTransport(init: ConsumerInit): SqsTransport {
  return sqs({
    clientConfig: sqsClientConfig(init.endpoints),
    waitTimeMs: init.settings.sqsWaitTimeMs,
  });
}

/**
 * The batch size of each poll of the raw loop: as the transport polls, ⌈concurrency / 10⌉
 * receives at once, each for at most 10 messages, together never more than `concurrency`
 * (64 → six polls of 10 and one of 4).
 */
export function pollSizes(concurrency: number): number[] {
  return Array.from({ length: Math.ceil(concurrency / MAX_BATCH) }, (_, i) =>
    Math.min(MAX_BATCH, concurrency - i * MAX_BATCH),
  );
}

/**
 * A receive/delete loop as one would write it by hand with `@aws-sdk/client-sqs`: the polls of
 * `pollSizes(concurrency)` each loop over `ReceiveMessage` (long poll, the same wait as the
 * transport), run the no-op handler on every message of the batch at once, then delete the
 * batch with one `DeleteMessageBatch`. No decoding, no visibility handling, and no idempotency
 * unless `guard` wraps the handler.
 */
export class RawSqsConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly client: SQSClient,
    private readonly guard: RawGuard | undefined,
  ) {}

  static async open(init: ConsumerInit, guard?: RawGuard): Promise<RawSqsConsumer> {
    return new RawSqsConsumer(init, sqsClient(init.endpoints), guard);
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const round = new RawRound(request, `${this.init.consumer} loop`);
    const { completion } = round;
    let failure: Error | undefined;
    const waitSeconds = Math.round(this.init.settings.sqsWaitTimeMs / 1_000);
    let running = true;
    const poll = async (queueUrl: string, size: number) => {
      while (running) {
        const answer = await this.client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: size,
            WaitTimeSeconds: waitSeconds,
            MessageAttributeNames: [MessageAttributeNames.requestId],
          }),
        );
        const messages = answer.Messages ?? [];
        if (messages.length === 0) continue;
        await Promise.all(messages.map((message) => this.handle(message, round.tally)));
        const deleted = await this.client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: messages.map((message, i) => ({
              Id: String(i),
              ReceiptHandle: message.ReceiptHandle,
            })),
          }),
        );
        if ((deleted.Failed ?? []).length > 0) {
          throw new Error(`DeleteMessageBatch failed: ${JSON.stringify(deleted.Failed)}`);
        }
        round.ack(deleted.Successful?.length ?? 0);
      }
    };

    await this.guard?.startRound();
    const start = startRound();
    let polls: Promise<void>[] = [];
    try {
      const { QueueUrl } = await this.client.send(
        new GetQueueUrlCommand({ QueueName: request.source }),
      );
      if (!QueueUrl) throw new Error(`no URL for queue ${request.source}`);
      polls = pollSizes(this.init.concurrency).map((size) =>
        poll(QueueUrl, size).catch((error: unknown) => {
          failure = error instanceof Error ? error : new Error(String(error));
          completion.fail(failure);
        }),
      );
      start.startedAt = performance.now();
      await completion.done;
      await this.guard?.settled();
    } finally {
      completion.fail(new Error('round ended'));
      running = false;
      // The long polls still out return within their wait; nothing is received after that.
      await Promise.all(polls);
    }
    if (failure) throw failure;
    return { ...round.result(start), ...(await this.guard?.endRound()) };
  }

  private handle(message: Message, tally: HandlerTally): Promise<void> {
    const requestId =
      message.MessageAttributes?.[MessageAttributeNames.requestId]?.StringValue ?? '';
    return handleRaw(tally, requestId, message.Body, this.guard);
  }

  async close(): Promise<ConsumerEnd> {
    this.client.destroy();
    await this.guard?.close();
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}
