import { type Message, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger, RejectOptions } from '@idemq/core';
import { deadLetterHeaders } from '@idemq/core/adapter';
import { deadLetterAttributes, ownAttribute, sqsId } from './attributes.js';
import type { SqsTransportOptions } from './options.js';
import { deadLetterNameOf, parseQueueArn, type QueueDirectory, type QueueRef } from './queues.js';

/**
 * Sends rejected messages to their dead-letter queue: a copy of the original (same body and
 * attributes, FIFO group and deduplication id kept) with the reason headers added. The caller
 * deletes the original only after this resolved, so a failure here loses nothing.
 */
export class DeadLetterRouter {
  private readonly targets = new Map<string, Promise<QueueRef>>();

  constructor(
    private readonly client: SQSClient,
    private readonly directory: QueueDirectory,
    private readonly options: Pick<SqsTransportOptions, 'deadLetterQueue' | 'redrive'>,
    private readonly logger: Logger,
  ) {}

  /**
   * The dead-letter queue of `queue`: the `deadLetterQueue` option, else the queue's
   * `RedrivePolicy` target, else `<name>-dlq`.
   */
  targetOf(queue: QueueRef): Promise<QueueRef> {
    let target = this.targets.get(queue.url);
    if (!target) {
      target = this.resolve(queue);
      this.targets.set(queue.url, target);
      target.catch(() => this.targets.delete(queue.url));
    }
    return target;
  }

  /** Sends the dead-letter copy of `message`, received from `queue` as `source`. */
  async send(
    queue: QueueRef,
    source: string,
    message: Message,
    options: RejectOptions,
  ): Promise<void> {
    const target = await this.targetOf(queue);
    const attempts = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    const attributes = deadLetterAttributes(
      message,
      deadLetterHeaders(options, { source, attempts }),
    );
    const fallbackId =
      ownAttribute(message.MessageAttributes, 'requestId')?.StringValue ?? message.MessageId ?? '';
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: target.url,
        MessageBody: message.Body ?? '',
        MessageAttributes: attributes,
        // A FIFO DLQ keeps the group's order and dedups a copy sent twice (a delete that failed).
        ...(target.fifo
          ? {
              MessageGroupId: message.Attributes?.MessageGroupId ?? sqsId(fallbackId),
              MessageDeduplicationId:
                message.Attributes?.MessageDeduplicationId ??
                sqsId(message.MessageId ?? fallbackId),
            }
          : {}),
      }),
    );
  }

  private async resolve(queue: QueueRef): Promise<QueueRef> {
    const configured = this.options.deadLetterQueue;
    if (typeof configured === 'string') return this.directory.refByName(configured);
    if (typeof configured === 'function') return this.directory.refByName(configured(queue.name));
    const { redriveTargetArn } = await this.directory.settings(queue);
    if (redriveTargetArn !== undefined) {
      const { account, name } = parseQueueArn(redriveTargetArn);
      return this.directory.refByName(name, account);
    }
    if (this.options.redrive) {
      // Declared native, but this queue has no RedrivePolicy: crash loops will not be caught.
      this.logger.warn(
        { queue: queue.name },
        'idemq sqs: redrive is set but the queue has no RedrivePolicy; dead letters go to <name>-dlq',
      );
    }
    return this.directory.refByName(deadLetterNameOf(queue.name));
  }
}
