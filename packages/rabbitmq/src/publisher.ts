import {
  type OutgoingMessage,
  type PublishReceipt,
  TransportClosedError,
  uuidv7,
} from '@idemq/core';
import { encodeBody, validateRequestId } from '@idemq/core/adapter';
import type { Options } from 'amqplib';
import { ConfirmTracker } from './confirms.js';
import {
  type Connector,
  isConnectionLoss,
  type LiveConnection,
  reconnectDelayMs,
} from './connection.js';
import { PublishFailedError } from './errors.js';
import { InternalHeaders, MAX_MESSAGE_ID_BYTES } from './headers.js';
import type { ResolvedOptions } from './options.js';
import { closedWithin, openedWithin } from './rpcDeadline.js';
import type { Topology } from './topology.js';

interface PublishChannel {
  generation: number;
  tracker: ConfirmTracker;
  open: boolean;
}

type PublisherSettings = Pick<
  ResolvedOptions,
  | 'connectTimeoutMs'
  | 'confirmTimeoutMs'
  | 'rpcTimeoutMs'
  | 'reconnectInitialDelayMs'
  | 'reconnectMaxDelayMs'
  | 'logger'
>;

/** The AMQP properties of a new message: persistent, mandatory, `messageId` = requestId. */
export function publishOptions(
  requestId: string,
  message: OutgoingMessage,
  contentType: string | undefined,
  nowMs: number,
): Options.Publish {
  const headers: Record<string, unknown> = { ...message.headers };
  if (message.key !== undefined) headers[InternalHeaders.key] = message.key;
  const fits = Buffer.byteLength(requestId, 'utf8') <= MAX_MESSAGE_ID_BYTES;
  // messageId is an AMQP short string: longer ids (up to core's 512 bytes) travel in a header.
  if (!fits) headers[InternalHeaders.requestId] = requestId;
  return {
    persistent: true,
    mandatory: true,
    headers,
    timestamp: Math.floor(nowMs / 1_000),
    ...(fits ? { messageId: requestId } : {}),
    ...(contentType === undefined ? {} : { contentType }),
  };
}

/** Largest message RabbitMQ 4.x accepts by default (`max_message_size`; 3.x: 128 MiB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Publishes on one confirm channel per connection. A publish whose confirm was lost with its
 * connection is sent again on the next one, within `connectTimeoutMs`: the broker may then hold
 * it twice, which the consumers' idempotency absorbs — losing it would not be.
 */
export class Publisher {
  private channel: Promise<PublishChannel> | undefined;
  private closed = false;

  constructor(
    private readonly connector: Connector,
    private readonly topology: Topology,
    private readonly settings: PublisherSettings,
  ) {}

  async publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt> {
    if (this.closed) throw new TransportClosedError('rabbitmq');
    const requestId =
      message.requestId === undefined ? uuidv7() : validateRequestId(message.requestId);
    const { bytes, contentType } = encodeBody(message);
    const content = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const options = publishOptions(requestId, message, contentType, Date.now());
    const routingKey = message.key ?? '';
    if (content.byteLength > MAX_MESSAGE_BYTES) {
      // Refused here rather than by a 4.x broker, which closes the channel over it.
      throw new PublishFailedError(
        `The message for "${destination}" is ${content.byteLength} bytes, over the ` +
          `${MAX_MESSAGE_BYTES}-byte limit (maxPayloadBytes)`,
        { failure: 'too-large', destination, requestId },
      );
    }
    const deadline = performance.now() + this.settings.connectTimeoutMs;

    for (let attempt = 1; ; attempt++) {
      const remainingMs = Math.max(1, deadline - performance.now());
      try {
        const exchange = await this.topology.exchange(destination);
        const { tracker } = await this.openChannel(remainingMs);
        await tracker.publish(exchange, routingKey, content, options);
        return { requestId };
      } catch (error) {
        if (this.closed) throw new TransportClosedError('rabbitmq');
        // The connection went away before the confirm (or before the publish left): again.
        const lost =
          (error instanceof PublishFailedError && error.failure === 'unconfirmed') ||
          (!(error instanceof PublishFailedError) && isConnectionLoss(error));
        if (!lost || performance.now() >= deadline) throw error;
        this.settings.logger.debug(
          { destination, requestId, attempt },
          'idemq rabbitmq: publish not confirmed before its channel closed, sending again',
        );
        await sleep(Math.min(reconnectDelayMs(attempt, this.settings), remainingMs));
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const channel = this.channel;
    this.channel = undefined;
    if (channel) {
      const close = () => channel.then((holder) => holder.tracker.channel.close());
      await closedWithin(close, this.settings.rpcTimeoutMs);
    }
  }

  /** The confirm channel of the current connection, opened on demand. */
  private async openChannel(timeoutMs: number): Promise<PublishChannel> {
    for (;;) {
      const live = await this.connector.get(timeoutMs);
      const current = this.channel;
      if (current) {
        const holder = await current.catch(() => undefined);
        if (holder?.open && holder.generation === live.generation) return holder;
        if (this.channel !== current) continue; // replaced while we looked
      }
      const opening = this.create(live);
      this.channel = opening;
      opening.catch(() => {
        if (this.channel === opening) this.channel = undefined;
      });
      return opening;
    }
  }

  private async create(live: LiveConnection): Promise<PublishChannel> {
    const channel = await openedWithin(
      live.model.createConfirmChannel(),
      this.settings.rpcTimeoutMs,
    );
    if (this.closed) {
      await channel.close().catch(() => undefined);
      throw new TransportClosedError('rabbitmq');
    }
    const holder: PublishChannel = {
      generation: live.generation,
      tracker: new ConfirmTracker(channel, this.settings.confirmTimeoutMs),
      open: true,
    };
    channel.on('error', (error: Error) => {
      this.settings.logger.warn({ error: error.message }, 'idemq rabbitmq: publish channel error');
      // A 404 (exchange deleted under us) closes the channel: declare again next time.
      this.topology.reset();
    });
    channel.on('close', () => {
      holder.open = false;
    });
    return holder;
  }
}

/** Not unref'd: the caller awaits the publish, so the process must live to settle it. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
