import { once } from 'node:events';
import { RABBITMQ_DEFAULTS, type RabbitmqTransport, rabbitmq } from '@idemq/rabbitmq';
import amqplib, { type Channel, type ChannelModel } from 'amqplib';
import type { BenchBroker, QueuedMessage, SourceState } from '../broker.js';

/**
 * The bench's side of RabbitMQ: declares each round's queue exactly as `rabbitmq({ url })`
 * declares it (through the transport's own `declare`, so both consumers read the same kind of
 * queue and idemq's consumer finds it as it expects), fills it before the measured interval,
 * inspects it afterwards and deletes everything it declared.
 *
 * Per source `s` the transport declares the fanout exchange `s`, the queue `s` bound to it, and
 * the dead-letter exchange and queue `s.dlq`; a retry would add tier queues `s.retry.<ms>`.
 */
export class RabbitmqBroker implements BenchBroker {
  /** Sources declared and not yet removed. */
  private readonly live = new Set<string>();

  private constructor(
    private readonly connection: ChannelModel,
    private readonly declarer: RabbitmqTransport,
    readonly description: string,
  ) {}

  static async open(url: string, queueType: 'quorum' | 'classic'): Promise<RabbitmqBroker> {
    const connection = await amqplib.connect(url, {
      clientProperties: { connection_name: 'idemq-bench admin' },
    });
    connection.on('error', () => undefined); // reported by the failing call
    const declarer = rabbitmq({ url, queueType, connectionName: 'idemq-bench declare' });
    return new RabbitmqBroker(
      connection,
      declarer,
      `RabbitMQ ${connection.connection.serverProperties.version ?? 'unknown'} (${queueType} queues)`,
    );
  }

  /**
   * Declares `source` and publishes `messages` to its queue on a confirm channel, waiting for
   * every confirm and for the queue to report them all: nothing of this is measured.
   */
  async fill(source: string, messages: readonly QueuedMessage[]): Promise<void> {
    this.live.add(source);
    const { queue } = await this.declarer.declare(source);
    const channel = await this.connection.createConfirmChannel();
    channel.on('error', () => undefined);
    try {
      const timestamp = Math.floor(Date.now() / 1_000);
      for (const message of messages) {
        // What the transport's publish() sends: messageId = requestId, JSON, persistent.
        const flushed = channel.sendToQueue(queue, Buffer.from(message.body), {
          messageId: message.requestId,
          contentType: 'application/json',
          persistent: true,
          timestamp,
          headers: {},
        });
        if (!flushed) await once(channel, 'drain');
      }
      await channel.waitForConfirms();
    } finally {
      await channel.close().catch(() => undefined);
    }
    const deadline = performance.now() + 10_000;
    for (;;) {
      const { left } = await this.inspect(source);
      if (left === messages.length) return;
      if (performance.now() > deadline) {
        throw new Error(`queue ${queue} holds ${left} messages, ${messages.length} were confirmed`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ready messages of `source`'s queue (0 once every message was acked), and its dead letters. */
  async inspect(source: string): Promise<SourceState> {
    const queue = await this.check(source);
    const deadLetters = await this.check(`${source}.dlq`);
    if (!queue || !deadLetters) throw new Error(`the queues of ${source} do not exist`);
    return { left: queue.messageCount, deadLetters: deadLetters.messageCount };
  }

  /**
   * Deletes what was declared for `source` (and the retry tier queues a retry would have
   * added). Returns the messages the deleted queues still held.
   */
  async remove(source: string): Promise<number> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      const dropped = await deleteSource(channel, source);
      this.live.delete(source);
      return dropped;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** Sources whose queue or dead-letter queue still exists on the broker. */
  /** Nothing to settle: `remove` deletes at once. */
  async settle(): Promise<void> {}

  async existing(sources: readonly string[]): Promise<string[]> {
    const left: string[] = [];
    for (const source of sources) {
      if ((await this.check(source)) || (await this.check(`${source}.dlq`))) left.push(source);
    }
    return left;
  }

  /** Removes whatever is still declared, then closes both connections. */
  async close(): Promise<void> {
    for (const source of [...this.live]) await this.remove(source).catch(() => 0);
    await this.declarer.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }

  /** `checkQueue` on a channel of its own (a missing queue closes the channel with 404). */
  private async check(queue: string) {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await channel.checkQueue(queue);
    } catch {
      return undefined;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
}

/**
 * Deletes the queues and exchanges `rabbitmq()` declares for `source` (and the retry tier queues
 * a retry would have added). Deleting a queue or exchange that does not exist is not an error in
 * RabbitMQ. Returns the messages the deleted queues still held.
 */
export async function deleteSource(channel: Channel, source: string): Promise<number> {
  let dropped = 0;
  for (const queue of [
    source,
    `${source}.dlq`,
    ...RABBITMQ_DEFAULTS.retryTiersMs.map((ms) => `${source}.retry.${ms}`),
  ]) {
    dropped += (await channel.deleteQueue(queue)).messageCount;
  }
  await channel.deleteExchange(source);
  await channel.deleteExchange(`${source}.dlq`);
  return dropped;
}
