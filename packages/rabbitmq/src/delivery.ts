import type { Delivery, IncomingMessage, RejectOptions, RetryOptions } from '@idemq/core';
import { deadLetterHeaders, OnceSettlement } from '@idemq/core/adapter';
import type { ConsumeMessage, Options } from 'amqplib';
import type { ChannelAcks } from './acks.js';
import type { ConfirmTracker } from './confirms.js';
import { copyOptions, InternalHeaders } from './headers.js';
import type { RetryTier, SubscriptionTopology, Topology } from './topology.js';

/** The channel a message was delivered on: its delivery tags mean nothing on any other. */
export interface DeliveryChannel {
  readonly tracker: ConfirmTracker;
  /** Acks and requeues of its deliveries (acks batched per event-loop turn). */
  readonly acks: ChannelAcks;
  /** False once the channel closed (or its connection did): the broker took the message back. */
  readonly open: boolean;
  /** Its deliveries not settled yet; a delivery leaves once its settlement is under way. */
  readonly unsettled: Set<RabbitmqDelivery>;
}

/** What every delivery of one subscription shares. */
export interface DeliveryContext {
  readonly source: string;
  readonly topology: Topology;
}

/**
 * Maps the settlement verbs onto the delivering channel, settled once through core's
 * `OnceSettlement` (first verb wins, later ones resolve `false` without reaching the broker: a
 * second ack of one delivery tag would close the channel with 406 PRECONDITION_FAILED). One
 * object per message, its verbs on the prototype.
 *
 * - ack: `basic.ack`, batched per event-loop turn (`ChannelAcks`: one `multiple` ack for a run).
 * - retry: a copy with attempt + 1 is published (confirmed) to the source queue — through a TTL
 *   tier queue for a delay — and only then the original is acked. Never the other way round: an
 *   ack first would lose the message if the publish failed. A crash in between leaves both: a
 *   duplicate, which idempotency absorbs.
 * - release: the same with the attempt unchanged, so giving a message back is free on every
 *   queue type and RabbitMQ version (a `nack` requeue counts as a delivery on quorum queues:
 *   `x-delivery-count` + 1 on 3.10; RabbitMQ 4.3 stops counting it).
 * - reject: a copy with the reason headers is published to the dead-letter exchange, then the
 *   original acked. `basic.reject` to a DLX could not carry the reason: it adds only `x-death`.
 * - When a copy cannot be published the original is requeued (`basic.nack`), never dropped,
 *   and the verb rejects with the cause.
 */
export class RabbitmqDelivery extends OnceSettlement implements Delivery {
  /** Left the channel's unsettled set. */
  private done = false;

  constructor(
    private readonly original: ConsumeMessage,
    readonly message: IncomingMessage,
    private readonly on: DeliveryChannel,
    /** The queues of the subscription when the message arrived. */
    private readonly names: SubscriptionTopology,
    private readonly context: DeliveryContext,
  ) {
    super();
  }

  /** Give back without counting an attempt; `false` when already settled. */
  giveBack(): Promise<boolean> {
    return this.release();
  }

  /** Re-delay a copy whose not-before time has not come, never handing it out. */
  postpone(delayMs: number): Promise<boolean> {
    return this.retry({ delayMs, [POSTPONE]: true } as RetryOptions);
  }

  protected isValid(): boolean {
    return this.on.open;
  }

  protected async brokerAck(): Promise<boolean> {
    try {
      await this.on.acks.ack(this.original);
    } finally {
      this.finish();
    }
    return true;
  }

  protected async brokerRetry(options: RetryOptions & { [POSTPONE]?: true }): Promise<boolean> {
    const delayMs = Math.max(0, options.delayMs ?? 0);
    if (!options[POSTPONE]) {
      await this.requeueCopy(this.message.attempt + 1, delayMs);
      return true;
    }
    // A hop of a long delay: not an attempt, and the not-before time stays.
    const headers = this.original.properties.headers ?? {};
    await this.requeueCopy(
      stampedAttempt(headers[InternalHeaders.attempt]),
      delayMs,
      Number(headers[InternalHeaders.notBefore]),
    );
    return true;
  }

  protected async brokerRelease(): Promise<boolean> {
    await this.requeueCopy(this.message.attempt, 0);
    return true;
  }

  protected async brokerReject(options: RejectOptions): Promise<boolean> {
    await this.replaceWith(
      this.names.deadLetterExchange,
      '',
      copyOptions(this.original, {
        set: deadLetterHeaders(options, {
          source: this.context.source,
          attempts: this.message.attempt,
        }),
        // A dead letter starts a life of its own: attempt 1 on its destination.
        drop: [InternalHeaders.attempt, InternalHeaders.notBefore],
      }),
    );
    return true;
  }

  /** RabbitMQ has no per-delivery lease to extend (`consumer_timeout` is per channel). */
  protected async brokerExtendLease(): Promise<boolean> {
    return true;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.on.unsettled.delete(this);
  }

  /** No confirmed copy: hand the original back rather than lose it or hold it forever. */
  private requeueOriginal(): void {
    this.on.acks.requeue(this.original);
  }

  /** Publishes a copy and acks the original once the copy is confirmed. */
  private async replaceWith(
    exchange: string,
    routingKey: string,
    options: Options.Publish,
  ): Promise<void> {
    try {
      await this.on.tracker.publish(exchange, routingKey, this.original.content, options);
    } catch (error) {
      this.requeueOriginal();
      throw error;
    } finally {
      this.finish();
    }
    // A channel gone after the confirm gives the original back too: the copy stands, and the
    // original is a duplicate that idempotency absorbs.
    await this.on.acks.ack(this.original).catch(() => undefined);
  }

  /**
   * A copy back into the source queue, straight or through the tier queue of `delayMs`. A copy
   * in a tier carries when it is due back, and the tier is watched in case the broker keeps it.
   */
  private async requeueCopy(attempt: number, delayMs: number, notBefore?: number): Promise<void> {
    let tier: RetryTier | undefined;
    let deadline = notBefore;
    if (delayMs > 0) {
      tier = await this.context.topology
        .retryTier(this.names.queue, delayMs)
        .catch((error: unknown) => {
          this.requeueOriginal();
          this.finish();
          throw error;
        });
      if (tier.hop) deadline ??= Date.now() + delayMs;
    }
    const publishedAt = Date.now();
    const drop: string[] = deadline === undefined ? [InternalHeaders.notBefore] : [];
    if (!tier) drop.push(InternalHeaders.due);
    await this.replaceWith(
      '',
      tier?.queue ?? this.names.queue,
      copyOptions(this.original, {
        set: {
          [InternalHeaders.attempt]: attempt,
          ...(deadline === undefined ? {} : { [InternalHeaders.notBefore]: deadline }),
          ...(tier ? { [InternalHeaders.due]: publishedAt + tier.tierMs } : {}),
        },
        drop,
      }),
    );
    if (tier) this.context.topology.copyParked(tier, this.names.queue, publishedAt);
  }
}

/** Marks a retry as a postponement (internal: never set by the engine). */
const POSTPONE = Symbol('idemq.rabbitmq.postpone');

function stampedAttempt(value: unknown): number {
  const n = typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
}
