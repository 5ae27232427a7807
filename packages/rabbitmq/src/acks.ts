import type { Channel, Message } from 'amqplib';
import { TransportUnavailableError } from './errors.js';

/** What the batcher needs of an amqplib channel. */
export type AckingChannel = Pick<Channel, 'ack' | 'nack'>;

interface Outstanding {
  message: Message;
  ackRequested: boolean;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const closedError = (cause?: unknown) =>
  new TransportUnavailableError(
    'The channel closed before the ack; RabbitMQ redelivers the message',
    cause === undefined ? {} : { cause },
  );

/**
 * Acks a channel's deliveries with as few frames as it can. Acks requested in one event-loop
 * turn leave together at its end: the longest run of acked deliveries from the oldest
 * unsettled one leaves as a single `basic.ack` with `multiple`, the rest one by one (never held
 * back behind a slow delivery, which would keep its prefetch slot). A multiple ack settles only
 * deliveries the broker still holds, so tags already nacked inside the run are not touched.
 * Multiple acks, because one ack per message costs a quorum queue far more broker CPU
 * (docs/performance.md).
 */
export class ChannelAcks {
  /** Unsettled deliveries by tag, oldest first: a channel's delivery tags only grow. */
  private readonly outstanding = new Map<number, Outstanding>();
  private requested: Outstanding[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private closed = false;

  constructor(private readonly channel: AckingChannel) {}

  /** A delivery was handed over on this channel. */
  delivered(message: Message): void {
    this.outstanding.set(message.fields.deliveryTag, { message, ackRequested: false });
  }

  /** Resolves once the ack is written; rejects if the channel closed first (it is redelivered). */
  ack(message: Message): Promise<void> {
    const entry = this.outstanding.get(message.fields.deliveryTag);
    if (this.closed || !entry) return Promise.reject(closedError());
    if (!entry.ackRequested) {
      entry.ackRequested = true;
      this.requested.push(entry);
    }
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Gives one delivery back to the queue at once (`basic.nack` with requeue). */
  requeue(message: Message): void {
    const tag = message.fields.deliveryTag;
    if (this.closed || !this.outstanding.has(tag)) return; // the broker requeues it by itself
    this.outstanding.delete(tag);
    try {
      this.channel.nack(message, false, true);
    } catch {
      // The channel died meanwhile: requeued by the broker all the same.
    }
  }

  /** The channel closed: nothing can be settled on it any more (the broker requeued it all). */
  close(cause?: unknown): void {
    this.closed = true;
    this.outstanding.clear();
    this.requested = [];
    this.settleWaiters(closedError(cause));
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    const requested = this.requested;
    this.requested = [];
    try {
      let last: Outstanding | undefined;
      for (const [tag, entry] of this.outstanding) {
        if (!entry.ackRequested) break;
        this.outstanding.delete(tag);
        last = entry;
      }
      if (last) this.channel.ack(last.message, true);
      for (const entry of requested) {
        const tag = entry.message.fields.deliveryTag;
        if (!this.outstanding.has(tag)) continue; // in the multiple ack
        this.outstanding.delete(tag);
        this.channel.ack(entry.message, false);
      }
    } catch (error) {
      // amqplib throws once the channel is closing: its close event follows.
      this.close(error);
      return;
    }
    this.settleWaiters();
  }

  private settleWaiters(error?: Error): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }
}
