import { EarliestTimer } from '@idemq/core/adapter';
import type { ConfirmChannel, Message, Options } from 'amqplib';
import { PublishFailedError } from './errors.js';
import { InternalHeaders } from './headers.js';

interface Pending {
  returned: boolean;
  /** Answered: confirmed, refused, failed or timed out; a later callback changes nothing. */
  settled: boolean;
  /** `performance.now()` by which the broker must have confirmed. */
  deadline: number;
  /** Rejects the publish as unconfirmed (its deadline passed). */
  expire: () => void;
}

/**
 * Publishes on a confirm channel and resolves only once the broker confirmed the message; a
 * `mandatory` message the broker could not route is returned (`basic.return`, sent before its
 * `basic.ack`) and rejects as `unroutable` instead of silently vanishing.
 *
 * A confirm that has not come within `confirmTimeoutMs` rejects as `unconfirmed`, the channel
 * left open: a caller waiting for it (a delivery's copy, say) must not wait forever on a queue
 * that never answers (a quorum queue whose leader its channel does not know can leave a publish
 * pending; rabbitmq-server#13095 fixed one such case in 4.0). The broker may still take the
 * message later: a duplicate, never a loss.
 *
 * A returned message is matched to its publish by exchange, routing key and id: returns of one
 * channel arrive in publish order, so the oldest pending publish with that triple is the one.
 */
export class ConfirmTracker {
  private readonly pending = new Map<string, Pending[]>();
  /** Publishes waiting for their confirm, swept by one timer for all their deadlines. */
  private readonly waiting = new Set<Pending>();
  private readonly deadlines = new EarliestTimer((now) => this.expire(now));

  constructor(
    readonly channel: ConfirmChannel,
    private readonly confirmTimeoutMs: number,
  ) {
    channel.on('return', (message: Message) => this.onReturn(message));
  }

  /**
   * Publishes `content`; resolves when confirmed, rejects with `PublishFailedError`. A nack is
   * tried again after each of `NACK_RETRY_PAUSES_MS`: a quorum queue declared a moment ago nacks
   * while it elects its leader. The last nack rejects as `nacked`.
   */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
  ): Promise<void> {
    for (const pauseMs of [...NACK_RETRY_PAUSES_MS, undefined]) {
      try {
        return await this.publishOnce(exchange, routingKey, content, options);
      } catch (error) {
        const nacked = error instanceof PublishFailedError && error.failure === 'nacked';
        if (!nacked || pauseMs === undefined) throw error;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }
  }

  private publishOnce(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
  ): Promise<void> {
    const requestId = requestIdOf(options.messageId, options.headers);
    // The default exchange ('') routes to the queue its routing key names.
    const target = { destination: exchange || routingKey, ...(requestId ? { requestId } : {}) };
    const key = returnKey(exchange, routingKey, idOf(options.messageId, options.headers));
    const entry: Pending = {
      returned: false,
      settled: false,
      deadline: performance.now() + this.confirmTimeoutMs,
      expire: () => undefined,
    };
    const queue = this.pending.get(key) ?? [];
    queue.push(entry);
    this.pending.set(key, queue);
    /** Marks the publish answered; false when it already was. */
    const settle = () => {
      if (entry.settled) return false;
      entry.settled = true;
      this.waiting.delete(entry);
      const index = queue.indexOf(entry);
      if (index >= 0) queue.splice(index, 1);
      if (queue.length === 0 && this.pending.get(key) === queue) this.pending.delete(key);
      return true;
    };

    return new Promise<void>((resolve, reject) => {
      entry.expire = () => {
        if (!settle()) return;
        reject(
          new PublishFailedError(
            `RabbitMQ did not confirm the message published to exchange "${exchange}" ` +
              `(routing key "${routingKey}") within ${this.confirmTimeoutMs} ms ` +
              '(confirmTimeoutMs); it may still take it',
            { failure: 'unconfirmed', ...target },
          ),
        );
      };
      try {
        this.channel.publish(
          exchange,
          routingKey,
          content,
          { ...options, mandatory: true },
          (error: unknown) => {
            if (!settle()) return; // timed out before: already rejected
            if (error) {
              const nacked = error instanceof Error && error.message === 'message nacked';
              reject(
                new PublishFailedError(
                  nacked
                    ? `RabbitMQ refused the message published to exchange "${exchange}" (basic.nack, ${NACK_RETRY_PAUSES_MS.length + 1} tries)`
                    : `The channel closed before RabbitMQ confirmed the message to exchange "${exchange}"`,
                  { failure: nacked ? 'nacked' : 'unconfirmed', ...target, cause: error },
                ),
              );
            } else if (entry.returned) {
              reject(
                new PublishFailedError(
                  `No queue is bound to exchange "${exchange}" (routing key "${routingKey}"): ` +
                    'the broker returned the message. Start a consumer of the destination once, ' +
                    'or call transport.declare(destination, group), before publishing.',
                  { failure: 'unroutable', ...target },
                ),
              );
            } else {
              resolve();
            }
          },
        );
      } catch (error) {
        settle();
        // A closed channel throws at once (IllegalOperationError); oversized headers throw too.
        reject(
          error instanceof Error && error.name === 'IllegalOperationError'
            ? new PublishFailedError(
                `The channel was closed before publishing to exchange "${exchange}"`,
                { failure: 'unconfirmed', ...target, cause: error },
              )
            : error,
        );
        return;
      }
      if (!entry.settled) {
        this.waiting.add(entry);
        this.deadlines.request(entry.deadline);
      }
    });
  }

  /** Fails the publishes whose confirm is overdue; returns the next deadline, if any. */
  private expire(now: number): number | undefined {
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.waiting) {
      if (entry.deadline <= now) entry.expire();
      else if (entry.deadline < next) next = entry.deadline;
    }
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }

  private onReturn(message: Message): void {
    const { exchange, routingKey } = message.fields;
    const key = returnKey(
      exchange,
      routingKey,
      idOf(message.properties.messageId, message.properties.headers),
    );
    const first = this.pending.get(key)?.find((entry) => !entry.returned);
    if (first) first.returned = true;
  }
}

/** Pauses before the second and third try of a publish the broker nacked. */
export const NACK_RETRY_PAUSES_MS: readonly number[] = [100, 400];

/** The requestId a publish carries as text: `messageId`, else the header fallback. */
function requestIdOf(messageId: unknown, headers: unknown): string | undefined {
  const id = idOf(messageId, headers, false);
  return id === '' ? undefined : id;
}

function idOf(messageId: unknown, headers: unknown, bytesAsHex = true): string {
  if (typeof messageId === 'string') return messageId;
  const header =
    typeof headers === 'object' && headers !== null
      ? (headers as Record<string, unknown>)[InternalHeaders.requestId]
      : undefined;
  if (typeof header === 'string') return header;
  if (header instanceof Uint8Array && bytesAsHex) return Buffer.from(header).toString('hex');
  return '';
}

function returnKey(exchange: string, routingKey: string, id: string): string {
  return `${exchange}\u0000${routingKey}\u0000${id}`;
}
