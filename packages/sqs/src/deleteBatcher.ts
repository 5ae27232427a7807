import {
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { isReceiptGone } from './errors.js';

/** What became of one delete: done, or refused because the receipt handle is no longer ours. */
export type DeleteOutcome = 'deleted' | 'gone';

interface Pending {
  receiptHandle: string;
  tries: number;
  resolve: (outcome: DeleteOutcome) => void;
  reject: (error: unknown) => void;
}

/** Most entries SQS takes in one batch call. */
const MAX_BATCH = 10;
/** Entries that failed for a server-side reason are sent again this many times in all. */
const MAX_TRIES = 3;

/**
 * Coalesces acks into `DeleteMessageBatch` calls of at most 10 entries per queue, and reads the
 * per-entry outcome: a call can succeed while some of its entries fail (`Failed[]`).
 * - `ReceiptHandleIsInvalid` and friends: the message is no longer ours → `gone`.
 * - a server fault (`SenderFault: false`): sent again in a later batch, up to 3 tries.
 * - anything else, or a failed call: that ack rejects with the error.
 */
export class DeleteBatcher {
  private readonly queues = new Map<string, Pending[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly client: SQSClient,
    private readonly windowMs: number,
  ) {}

  /** Deletes one message; resolves once SQS answered for its entry. */
  delete(queueUrl: string, receiptHandle: string): Promise<DeleteOutcome> {
    return new Promise((resolve, reject) => {
      this.enqueue(queueUrl, { receiptHandle, tries: 0, resolve, reject });
    });
  }

  /** Sends everything queued now and waits for every call in flight. */
  async flush(): Promise<void> {
    for (const queueUrl of [...this.queues.keys()]) this.send(queueUrl);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private enqueue(queueUrl: string, pending: Pending): void {
    let queue = this.queues.get(queueUrl);
    if (!queue) {
      queue = [];
      this.queues.set(queueUrl, queue);
    }
    queue.push(pending);
    if (queue.length >= MAX_BATCH) {
      this.send(queueUrl);
    } else if (!this.timers.has(queueUrl)) {
      const timer = setTimeout(() => this.send(queueUrl), this.windowMs);
      timer.unref();
      this.timers.set(queueUrl, timer);
    }
  }

  private send(queueUrl: string): void {
    const timer = this.timers.get(queueUrl);
    if (timer) clearTimeout(timer);
    this.timers.delete(queueUrl);
    const queue = this.queues.get(queueUrl) ?? [];
    this.queues.delete(queueUrl);
    for (let start = 0; start < queue.length; start += MAX_BATCH) {
      const call = this.call(queueUrl, queue.slice(start, start + MAX_BATCH)).finally(() =>
        this.inFlight.delete(call),
      );
      this.inFlight.add(call);
    }
  }

  private async call(queueUrl: string, batch: Pending[]): Promise<void> {
    // Ids only need to be unique within one call.
    const entries = batch.map((pending, i) => ({
      Id: String(i),
      ReceiptHandle: pending.receiptHandle,
    }));
    let answer: DeleteMessageBatchCommandOutput;
    try {
      answer = await this.client.send(
        new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
      );
    } catch (error) {
      // The SDK already retried transient failures of the call itself.
      for (const pending of batch) pending.reject(error);
      return;
    }
    const answered = new Set<Pending>();
    for (const { Id } of answer.Successful ?? []) {
      const pending = batch[Number(Id)];
      if (!pending) continue;
      answered.add(pending);
      pending.resolve('deleted');
    }
    for (const failure of answer.Failed ?? []) {
      const pending = batch[Number(failure.Id)];
      if (!pending) continue;
      answered.add(pending);
      pending.tries += 1;
      if (isReceiptGone(failure.Code)) {
        pending.resolve('gone');
      } else if (failure.SenderFault === false && pending.tries < MAX_TRIES) {
        this.enqueue(queueUrl, pending);
      } else {
        const error = new Error(
          `DeleteMessageBatch entry failed: ${failure.Code ?? 'unknown'} ${failure.Message ?? ''}`.trim(),
        );
        error.name = failure.Code ?? 'DeleteMessageBatchEntryError';
        pending.reject(error);
      }
    }
    for (const pending of batch) {
      if (!answered.has(pending))
        pending.reject(new Error('DeleteMessageBatch left an entry unanswered'));
    }
  }
}
