import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { Delivery, IncomingMessage, RejectOptions, RetryOptions } from '@idemq/core';
import { OnceSettlement } from '@idemq/core/adapter';
import { unpackMessage } from './attributes.js';
import type { DeleteBatcher } from './deleteBatcher.js';
import { DelayTooLongError, MAX_VISIBILITY_MS } from './errors.js';
import type { QueueRef } from './queues.js';
import { changeVisibility } from './visibility.js';

/**
 * One received message's hold on SQS: its receipt handle and how long its visibility surely
 * lasts. Times are `performance.now()` values (monotonic).
 */
export class Receipt {
  /** SQS refused the handle: the message is no longer ours. */
  lost = false;

  constructor(
    readonly queueUrl: string,
    readonly handle: string,
    /** When the receive request was sent: SQS made the message invisible after this. */
    readonly receivedAt: number,
    /** Until when the visibility surely lasts (counted from a request's send time). */
    public deadline: number,
  ) {}

  /** False once lost or past its visibility: another consumer may have the message now. */
  held(now = performance.now()): boolean {
    return !this.lost && now < this.deadline;
  }

  /** Longest visibility, in whole seconds, SQS still grants: 12 h from the receive in total. */
  maxSecondsLeft(now = performance.now()): number {
    return Math.max(0, Math.floor((MAX_VISIBILITY_MS - (now - this.receivedAt)) / 1000));
  }
}

/** What became of a settled delivery's message, for whoever waits behind it (FIFO groups). */
export type SettledFate = 'removed' | 'returned';

/** A received message as its subscription tracks it. */
export interface Received {
  readonly message: Message;
  readonly receipt: Receipt;
  /** Its FIFO message group; `undefined` on a standard queue. */
  readonly group: string | undefined;
}

/** Everything a delivery needs from its subscription and connection: one per subscription. */
export interface DeliveryContext {
  readonly client: SQSClient;
  readonly deleter: DeleteBatcher;
  readonly queue: QueueRef;
  /** The source as the subscriber named it. */
  readonly source: string;
  /** False once the subscription or the connection is closed: nothing can be settled then. */
  isOpen(): boolean;
  /** Sends the dead-letter copy; the delivery deletes the original afterwards. */
  deadLetter(message: Message, options: RejectOptions): Promise<void>;
  /** Called once per delivery, when its first settlement verb has finished. */
  onSettled(received: Received, fate: SettledFate): void;
}

/** The message as the engine sees it, read leniently from what SQS returned. */
export function toIncoming(message: Message, source: string, fifo: boolean): IncomingMessage {
  const unpacked = unpackMessage(message);
  const system = message.Attributes ?? {};
  const count = Number(system.ApproximateReceiveCount);
  const attempt = Number.isInteger(count) && count >= 1 ? count : 1;
  const sentAt = Number(system.SentTimestamp);
  // A message of another producer on a FIFO queue: its group is its key.
  const key = unpacked.key ?? (unpacked.foreign && fifo ? system.MessageGroupId : undefined);
  return {
    requestId: unpacked.requestId,
    body: unpacked.body,
    headers: unpacked.headers,
    source,
    ...(key === undefined ? {} : { key }),
    ...(unpacked.contentType === undefined ? {} : { contentType: unpacked.contentType }),
    ...(unpacked.cloudEvent === undefined ? {} : { cloudEvent: unpacked.cloudEvent }),
    ...(Number.isFinite(sentAt) ? { publishedAt: sentAt } : {}),
    attempt,
    attemptSource: 'approximate',
    redelivered: attempt > 1,
    raw: message,
  };
}

/**
 * A delivery whose verbs map to SQS calls, settled once through core's `OnceSettlement`:
 * - ack → `DeleteMessageBatch` entry; retry → `ChangeMessageVisibility(delay)`;
 *   release → `ChangeMessageVisibility(0)`; reject → dead-letter copy, then delete;
 *   extendLease → `ChangeMessageVisibility(ms)`, capped at 12 h from the receive.
 * - Once the visibility has lapsed (by the local clock, counted conservatively from when the
 *   request was sent) or SQS refuses the receipt handle, verbs resolve `false`: another consumer
 *   may hold the message, and its copy is settled there.
 */
export class SqsDelivery extends OnceSettlement implements Delivery {
  /** What became of the message, told to the subscription once settled. */
  private fate: SettledFate = 'returned';

  constructor(
    private readonly context: DeliveryContext,
    readonly received: Received,
    readonly message: IncomingMessage,
  ) {
    super();
  }

  override async retry(options?: RetryOptions): Promise<boolean> {
    const asked = options?.delayMs ?? 0;
    const delayMs = Number.isFinite(asked) ? Math.max(0, asked) : 0;
    // Checked before settling: a refused delay leaves the delivery unsettled for another verb.
    if (!this.settled && this.isValid()) {
      const maxDelayMs = this.received.receipt.maxSecondsLeft() * 1000;
      if (visibilitySeconds(delayMs) * 1000 > maxDelayMs) {
        throw new DelayTooLongError(delayMs, maxDelayMs);
      }
    }
    return super.retry({ delayMs });
  }

  protected isValid(): boolean {
    return this.context.isOpen() && this.received.receipt.held();
  }

  protected async brokerAck(): Promise<boolean> {
    if (!(await this.remove())) return false;
    this.fate = 'removed';
    return true;
  }

  protected brokerRetry({ delayMs }: RetryOptions): Promise<boolean> {
    return this.setVisibility(visibilitySeconds(delayMs ?? 0));
  }

  protected async brokerReject(options: RejectOptions): Promise<boolean> {
    await this.context.deadLetter(this.received.message, options);
    // The copy is safe in the DLQ; if the original is no longer ours it comes back and is
    // dead-lettered again (a FIFO DLQ drops the second copy by its deduplication id).
    if (await this.remove()) this.fate = 'removed';
    return true;
  }

  protected brokerRelease(): Promise<boolean> {
    return this.setVisibility(0);
  }

  protected async brokerExtendLease(ms: number): Promise<boolean> {
    const { receipt } = this.received;
    const sentAt = performance.now();
    const seconds = Math.min(visibilitySeconds(ms), receipt.maxSecondsLeft(sentAt));
    if (seconds <= 0) return false; // 12 h since the receive: nothing left to extend
    if (!(await this.setVisibility(seconds))) return false;
    receipt.deadline = Math.max(receipt.deadline, sentAt + seconds * 1000);
    return true;
  }

  protected override onSettled(): void {
    this.context.onSettled(this.received, this.fate);
  }

  /** Deletes the message; false when SQS refused the receipt handle (no longer ours). */
  private async remove(): Promise<boolean> {
    const { receipt } = this.received;
    if ((await this.context.deleter.delete(this.context.queue.url, receipt.handle)) === 'gone') {
      receipt.lost = true;
      return false;
    }
    return true;
  }

  /** Changes the visibility; false when SQS refused the receipt handle. */
  private async setVisibility(seconds: number): Promise<boolean> {
    const { client, queue } = this.context;
    const { receipt } = this.received;
    if ((await changeVisibility(client, queue.url, receipt.handle, seconds)) === 'gone') {
      receipt.lost = true;
      return false;
    }
    return true;
  }
}

/** SQS counts visibility in whole seconds: a delay is rounded up, never cut short. */
function visibilitySeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}
