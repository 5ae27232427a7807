import { type RabbitmqTransport, rabbitmq } from '@idemq/rabbitmq';
import amqplib, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { RawRound, startRound } from '../consumerKit.js';
import { handleRaw, type RawGuard } from '../handRolled.js';
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
 * acks, the no-op handler awaited, then `channel.ack`. Nothing else: no decoding, and no
 * idempotency unless `guard` wraps the handler.
 */
export class RawAmqpConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly connection: ChannelModel,
    private readonly guard: RawGuard | undefined,
  ) {}

  static async open(init: ConsumerInit, guard?: RawGuard): Promise<RawAmqpConsumer> {
    const connection = await amqplib.connect(init.endpoints.amqpUrl, {
      clientProperties: { connection_name: `idemq-bench ${init.consumer}` },
    });
    connection.on('error', () => undefined); // a failed round reports its own error
    return new RawAmqpConsumer(init, connection, guard);
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    await channel.prefetch(this.init.concurrency, false);
    const round = new RawRound(request, `${this.init.consumer} consumer`);
    const { completion } = round;
    const { guard } = this;
    const onMessage = async (message: ConsumeMessage | null) => {
      if (message === null) {
        completion.fail(new Error(`the broker cancelled the consumer of ${request.source}`));
        return;
      }
      try {
        await handleRaw(round.tally, String(message.properties.messageId), message.content, guard);
        channel.ack(message);
        round.ack();
      } catch (error) {
        completion.fail(error instanceof Error ? error : new Error(String(error)));
      }
    };

    await guard?.startRound();
    const start = startRound();
    let consumerTag: string | undefined;
    try {
      ({ consumerTag } = await channel.consume(request.source, onMessage, { noAck: false }));
      start.startedAt = performance.now();
      await completion.done;
      await guard?.settled();
    } finally {
      completion.fail(new Error('round ended')); // stops the stall timer if consume() threw
      if (consumerTag !== undefined) await channel.cancel(consumerTag).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    return { ...round.result(start), ...(await guard?.endRound()) };
  }

  async close(): Promise<ConsumerEnd> {
    await this.connection.close().catch(() => undefined);
    await this.guard?.close();
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}
