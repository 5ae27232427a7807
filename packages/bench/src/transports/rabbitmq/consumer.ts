import { type RabbitmqTransport, rabbitmq } from '@idemq/rabbitmq';
import amqplib, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { noop, RawRound, startRound } from '../consumerKit.js';
import type { ConsumerSession } from '../idemqConsumer.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from '../types.js';

/** idemq's transport as users get it: `rabbitmq({ url })`; it sets prefetch = concurrency. */
export function idemqTransport(init: ConsumerInit): RabbitmqTransport {
  return rabbitmq({
    url: init.endpoints.amqpUrl,
    queueType: init.settings.queueType,
    connectionName: 'idemq-bench idemq',
  });
}

/**
 * amqplib as one would write it by hand: a channel with `prefetch(P)`, `consume` with manual
 * acks, the no-op handler awaited, then `channel.ack`. Nothing else: no decoding, no
 * idempotency.
 */
export class RawAmqpConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly connection: ChannelModel,
  ) {}

  static async open(init: ConsumerInit): Promise<RawAmqpConsumer> {
    const connection = await amqplib.connect(init.endpoints.amqpUrl, {
      clientProperties: { connection_name: 'idemq-bench raw' },
    });
    connection.on('error', () => undefined); // a failed round reports its own error
    return new RawAmqpConsumer(init, connection);
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    await channel.prefetch(this.init.concurrency, false);
    const round = new RawRound(request, 'raw consumer');
    const { completion } = round;
    const onMessage = async (message: ConsumeMessage | null) => {
      if (message === null) {
        completion.fail(new Error(`the broker cancelled the consumer of ${request.source}`));
        return;
      }
      try {
        round.tally.add(String(message.properties.messageId));
        await noop(message.content);
        channel.ack(message);
        round.ack();
      } catch (error) {
        completion.fail(error instanceof Error ? error : new Error(String(error)));
      }
    };

    const start = startRound();
    let consumerTag: string | undefined;
    try {
      ({ consumerTag } = await channel.consume(request.source, onMessage, { noAck: false }));
      start.startedAt = performance.now();
      await completion.done;
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if consume() threw
      if (consumerTag !== undefined) await channel.cancel(consumerTag).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    return round.result(start);
  }

  async close(): Promise<ConsumerEnd> {
    await this.connection.close().catch(() => undefined);
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}
