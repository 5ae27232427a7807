import type { Delivery, RejectOptions, RetryOptions } from './transport.js';

/** The settlement verbs of one delivery, each effective once (a `Delivery` without its message). */
export type Settlement = Omit<Delivery, 'message'>;

type Verb = 'ack' | 'retry' | 'reject' | 'release';

/**
 * Settle-once as a base class: the first settlement verb wins, and every later one resolves
 * `false` without reaching the broker. An adapter subclasses it with its broker calls; each
 * delivery is then one object whose verbs live on the prototype, where closures built per
 * delivery cost a dozen allocations on every message.
 *
 * The broker calls resolve `false` when the broker refused (the message is no longer ours), and
 * throw when the call failed: the delivery is marked settled before the call starts, so a call
 * that throws must leave the message with the broker (requeued, or redelivered with its
 * channel).
 */
export abstract class OnceSettlement implements Settlement {
  /** A plain field, not a getter: read on every delivery. */
  settled = false;

  /** False once the delivery can no longer be settled (connection gone, lease lapsed). */
  protected abstract isValid(): boolean;
  protected abstract brokerAck(): Promise<boolean>;
  protected abstract brokerRetry(options: RetryOptions): Promise<boolean>;
  protected abstract brokerReject(options: RejectOptions): Promise<boolean>;
  protected abstract brokerRelease(): Promise<boolean>;
  protected abstract brokerExtendLease(ms: number): Promise<boolean>;

  /**
   * Runs once, when the first verb has finished (done, refused, failed, or found the delivery
   * no longer valid). For adapters that free a slot or wake a FIFO group then.
   */
  protected onSettled(): void {}

  ack(): Promise<boolean> {
    return this.settle('ack', undefined);
  }

  retry(options: RetryOptions = {}): Promise<boolean> {
    return this.settle('retry', options);
  }

  reject(options: RejectOptions): Promise<boolean> {
    return this.settle('reject', options);
  }

  release(): Promise<boolean> {
    return this.settle('release', undefined);
  }

  async extendLease(ms: number): Promise<boolean> {
    if (this.settled || !this.isValid()) return false;
    return this.brokerExtendLease(ms);
  }

  private async settle(verb: Verb, options: RetryOptions | RejectOptions | undefined) {
    if (this.settled) return false;
    this.settled = true; // before any await: a concurrent second call must see it
    try {
      if (!this.isValid()) return false;
      switch (verb) {
        case 'ack':
          return await this.brokerAck();
        case 'retry':
          return await this.brokerRetry(options as RetryOptions);
        case 'reject':
          return await this.brokerReject(options as RejectOptions);
        case 'release':
          return await this.brokerRelease();
      }
    } finally {
      this.onSettled();
    }
  }
}
