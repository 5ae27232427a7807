import type { ConfirmChannel, Message, Options } from 'amqplib';
import { PublishFailedError } from './errors.js';
import { InternalHeaders } from './headers.js';

interface Pending {
  returned: boolean;
}

/**
 * Publishes on a confirm channel and resolves only once the broker confirmed the message; a
 * `mandatory` message the broker could not route is returned (`basic.return`, sent before its
 * `basic.ack`) and rejects as `unroutable` instead of silently vanishing.
 *
 * A returned message is matched to its publish by exchange, routing key and id: returns of one
 * channel arrive in publish order, so the oldest pending publish with that triple is the one.
 */
export class ConfirmTracker {
  private readonly pending = new Map<string, Pending[]>();

  constructor(readonly channel: ConfirmChannel) {
    channel.on('return', (message: Message) => this.onReturn(message));
  }

  /** Publishes `content`; resolves when confirmed, rejects with `PublishFailedError`. */
  publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
  ): Promise<void> {
    const target = { exchange, routingKey };
    const key = returnKey(exchange, routingKey, idOf(options.messageId, options.headers));
    const entry: Pending = { returned: false };
    const queue = this.pending.get(key) ?? [];
    queue.push(entry);
    this.pending.set(key, queue);
    const forget = () => {
      const index = queue.indexOf(entry);
      if (index >= 0) queue.splice(index, 1);
      if (queue.length === 0 && this.pending.get(key) === queue) this.pending.delete(key);
    };

    return new Promise<void>((resolve, reject) => {
      try {
        this.channel.publish(
          exchange,
          routingKey,
          content,
          { ...options, mandatory: true },
          (error: unknown) => {
            forget();
            if (error) {
              const nacked = error instanceof Error && error.message === 'message nacked';
              reject(
                new PublishFailedError(
                  nacked ? 'nacked' : 'unconfirmed',
                  target,
                  nacked
                    ? `RabbitMQ refused the message published to exchange "${exchange}" (basic.nack)`
                    : `The channel closed before RabbitMQ confirmed the message to exchange "${exchange}"`,
                  { cause: error },
                ),
              );
            } else if (entry.returned) {
              reject(
                new PublishFailedError(
                  'unroutable',
                  target,
                  `No queue is bound to exchange "${exchange}" (routing key "${routingKey}"): ` +
                    'the broker returned the message. Start a consumer of the destination once, ' +
                    'or call transport.declare(destination, group), before publishing.',
                ),
              );
            } else {
              resolve();
            }
          },
        );
      } catch (error) {
        forget();
        // A closed channel throws at once (IllegalOperationError); oversized headers throw too.
        reject(
          error instanceof Error && error.name === 'IllegalOperationError'
            ? new PublishFailedError(
                'unconfirmed',
                target,
                `The channel was closed before publishing to exchange "${exchange}"`,
                { cause: error },
              )
            : error,
        );
      }
    });
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

function idOf(messageId: unknown, headers: unknown): string {
  if (typeof messageId === 'string') return messageId;
  const header =
    typeof headers === 'object' && headers !== null
      ? (headers as Record<string, unknown>)[InternalHeaders.requestId]
      : undefined;
  if (typeof header === 'string') return header;
  if (header instanceof Uint8Array) return Buffer.from(header).toString('hex');
  return '';
}

function returnKey(exchange: string, routingKey: string, id: string): string {
  return `${exchange}\u0000${routingKey}\u0000${id}`;
}
