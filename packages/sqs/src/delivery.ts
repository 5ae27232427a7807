import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import {
  type Delivery,
  type IncomingMessage,
  type RejectOptions,
  type RetryOptions,
  settleOnce,
} from '@idemq/core';
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

/** Everything a delivery needs from its subscription and connection. */
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
  onSettled(fate: SettledFate): void;
}

/** Raised inside a settlement when SQS refused the receipt handle; the verb resolves `false`. */
class ReceiptGone extends Error {}

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
    ...(Number.isFinite(sentAt) ? { publishedAt: sentAt } : {}),
    attempt,
    attemptSource: 'approximate',
    redelivered: attempt > 1,
    raw: message,
  };
}

/**
 * A delivery whose verbs map to SQS calls, wrapped in core's `settleOnce`:
 * - ack → `DeleteMessageBatch` entry; retry → `ChangeMessageVisibility(delay)`;
 *   release → `ChangeMessageVisibility(0)`; reject → dead-letter copy, then delete;
 *   extendLease → `ChangeMessageVisibility(ms)`, capped at 12 h from the receive.
 * - Once the visibility has lapsed (by the local clock, counted conservatively from when the
 *   request was sent) or SQS refuses the receipt handle, verbs resolve `false`: another consumer
 *   may hold the message, and its copy is settled there.
 */
export function createDelivery(
  context: DeliveryContext,
  message: Message,
  incoming: IncomingMessage,
  receipt: Receipt,
): Delivery {
  const { client, queue } = context;
  let fate: SettledFate = 'returned';
  let notified = false;

  const setVisibility = async (seconds: number): Promise<void> => {
    if ((await changeVisibility(client, queue.url, receipt.handle, seconds)) === 'gone') {
      receipt.lost = true;
      throw new ReceiptGone();
    }
  };
  const remove = async (): Promise<void> => {
    if ((await context.deleter.delete(queue.url, receipt.handle)) === 'gone') {
      receipt.lost = true;
      throw new ReceiptGone();
    }
  };

  const settlement = settleOnce({
    isValid: () => context.isOpen() && receipt.held(),
    ack: async () => {
      await remove();
      fate = 'removed';
    },
    retry: async ({ delayMs }) => setVisibility(visibilitySeconds(delayMs ?? 0)),
    reject: async (options) => {
      await context.deadLetter(message, options);
      // The copy is safe in the DLQ; if the original is no longer ours it comes back and is
      // dead-lettered again (a FIFO DLQ drops the second copy by its deduplication id).
      await remove().then(
        () => {
          fate = 'removed';
        },
        (error: unknown) => {
          if (!(error instanceof ReceiptGone)) throw error;
        },
      );
    },
    release: async () => setVisibility(0),
    extendLease: async (ms) => {
      const sentAt = performance.now();
      const seconds = Math.min(visibilitySeconds(ms), receipt.maxSecondsLeft(sentAt));
      if (seconds <= 0) throw new ReceiptGone(); // 12 h since the receive: nothing left to extend
      await setVisibility(seconds);
      receipt.deadline = Math.max(receipt.deadline, sentAt + seconds * 1000);
    },
  });

  /** Runs one settling verb: `false` for a refused receipt, and tells the subscription once. */
  const settling =
    <A extends unknown[]>(verb: (...args: A) => Promise<boolean>) =>
    async (...args: A): Promise<boolean> => {
      const first = !settlement.settled;
      try {
        return await verb(...args);
      } catch (error) {
        if (error instanceof ReceiptGone) return false;
        throw error;
      } finally {
        if (first && settlement.settled && !notified) {
          notified = true;
          context.onSettled(fate);
        }
      }
    };

  const retry = settling((options?: RetryOptions) => settlement.retry(options));

  return {
    message: incoming,
    get settled() {
      return settlement.settled;
    },
    ack: settling(() => settlement.ack()),
    async retry(options?: RetryOptions) {
      const asked = options?.delayMs ?? 0;
      const delayMs = Number.isFinite(asked) ? Math.max(0, asked) : 0;
      // Checked before settling: a refused delay leaves the delivery unsettled for another verb.
      if (!settlement.settled && context.isOpen() && receipt.held()) {
        const maxDelayMs = receipt.maxSecondsLeft() * 1000;
        if (visibilitySeconds(delayMs) * 1000 > maxDelayMs) {
          throw new DelayTooLongError(delayMs, maxDelayMs);
        }
      }
      return retry({ delayMs });
    },
    reject: settling((options: RejectOptions) => settlement.reject(options)),
    release: settling(() => settlement.release()),
    async extendLease(ms: number) {
      try {
        return await settlement.extendLease(ms);
      } catch (error) {
        if (error instanceof ReceiptGone) return false;
        throw error;
      }
    },
  };
}

/** SQS counts visibility in whole seconds: a delay is rounded up, never cut short. */
function visibilitySeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}
