import {
  DeadLetterHeaders,
  type Delivery,
  type IncomingMessage,
  type RejectOptions,
  type RetryOptions,
  settledDelivery,
} from '@idemq/core';
import type { ConsumeMessage, Options } from 'amqplib';
import type { ChannelAcks } from './acks.js';
import type { ConfirmTracker } from './confirms.js';
import { capText, copyOptions, InternalHeaders } from './headers.js';
import type { SubscriptionTopology, Topology } from './topology.js';

/** The channel a message was delivered on: its delivery tags mean nothing on any other. */
export interface DeliveryChannel {
  readonly tracker: ConfirmTracker;
  /** Acks and requeues of its deliveries (acks batched per event-loop turn). */
  readonly acks: ChannelAcks;
  /** False once the channel closed (or its connection did): the broker took the message back. */
  readonly open: boolean;
}

/** What a delivery needs to know about where it came from. */
export interface DeliveryContext {
  source: string;
  names: SubscriptionTopology;
  topology: Topology;
  /** Called once the delivery is settled, whatever the outcome. */
  onSettled: (delivery: RabbitmqDelivery) => void;
}

/** A delivery as the engine sees it, plus what the subscription itself needs. */
export interface RabbitmqDelivery extends Delivery {
  /** Give back without counting an attempt; `false` when already settled. */
  giveBack(): Promise<boolean>;
  /** Re-delay a copy whose not-before time has not come, never handing it out. */
  postpone(delayMs: number): Promise<boolean>;
}

/**
 * Maps the settlement verbs onto the delivering channel, through core's `settleOnce` (first verb
 * wins, later ones resolve `false` without reaching the broker: a second ack of one delivery tag
 * would close the channel with 406 PRECONDITION_FAILED).
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
export function createDelivery(
  message: ConsumeMessage,
  incoming: IncomingMessage,
  on: DeliveryChannel,
  context: DeliveryContext,
): RabbitmqDelivery {
  const { names, topology } = context;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    context.onSettled(delivery);
  };

  /** No confirmed copy: hand the original back rather than lose it or hold it forever. */
  const requeueOriginal = () => on.acks.requeue(message);

  /** Publishes a copy and acks the original once the copy is confirmed. */
  const replaceWith = async (exchange: string, routingKey: string, options: Options.Publish) => {
    try {
      await on.tracker.publish(exchange, routingKey, message.content, options);
    } catch (error) {
      requeueOriginal();
      throw error;
    } finally {
      finish();
    }
    // A channel gone after the confirm gives the original back too: the copy stands, and the
    // original is a duplicate that idempotency absorbs.
    await on.acks.ack(message).catch(() => undefined);
  };

  /** A copy back into the source queue, straight or through the tier queue of `delayMs`. */
  const requeueCopy = async (attempt: number, delayMs: number, notBefore?: number) => {
    let target = names.queue;
    let deadline = notBefore;
    if (delayMs > 0) {
      const tier = await topology.retryTier(names.queue, delayMs).catch((error: unknown) => {
        requeueOriginal();
        finish();
        throw error;
      });
      target = tier.queue;
      if (tier.hop) deadline ??= Date.now() + delayMs;
    }
    await replaceWith(
      '',
      target,
      copyOptions(message, {
        set: {
          [InternalHeaders.attempt]: attempt,
          ...(deadline === undefined ? {} : { [InternalHeaders.notBefore]: deadline }),
        },
        drop: deadline === undefined ? [InternalHeaders.notBefore] : [],
      }),
    );
  };

  const settled = settledDelivery(incoming, {
    isValid: () => on.open,
    ack: async () => {
      try {
        await on.acks.ack(message);
      } finally {
        finish();
      }
    },
    retry: (options: RetryOptions & { [POSTPONE]?: true }) => {
      const delayMs = Math.max(0, options.delayMs ?? 0);
      if (!options[POSTPONE]) return requeueCopy(incoming.attempt + 1, delayMs);
      // A hop of a long delay: not an attempt, and the not-before time stays.
      const headers = message.properties.headers ?? {};
      return requeueCopy(
        stampedAttempt(headers[InternalHeaders.attempt]),
        delayMs,
        Number(headers[InternalHeaders.notBefore]),
      );
    },
    release: () => requeueCopy(incoming.attempt, 0),
    reject: ({ reason, code, attempts }: RejectOptions) =>
      replaceWith(
        names.deadLetterExchange,
        '',
        copyOptions(message, {
          set: {
            [DeadLetterHeaders.reason]: capText(reason),
            [DeadLetterHeaders.code]: code ?? '',
            [DeadLetterHeaders.attempts]: String(attempts ?? incoming.attempt),
            [DeadLetterHeaders.source]: context.source,
          },
          // A dead letter starts a life of its own: attempt 1 on its destination.
          drop: [InternalHeaders.attempt, InternalHeaders.notBefore],
        }),
      ),
    // RabbitMQ has no per-delivery lease to extend (`consumer_timeout` is per channel).
    extendLease: async () => {},
  });

  const delivery: RabbitmqDelivery = Object.assign(settled, {
    giveBack: () => settled.release(),
    postpone: (delayMs: number) => settled.retry({ delayMs, [POSTPONE]: true } as RetryOptions),
  });
  return delivery;
}

/** Marks a retry as a postponement (internal: never set by the engine). */
const POSTPONE = Symbol('idemq.rabbitmq.postpone');

function stampedAttempt(value: unknown): number {
  const n = typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
}
