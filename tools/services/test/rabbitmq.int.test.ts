import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('RabbitMQ', () => {
  let connection: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    connection = await amqp.connect(serviceUrls().amqp, { timeout: 5000 });
    channel = await connection.createChannel();
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('publishes to a fresh queue and consumes with a manual ack', async () => {
    const queue = `idemq-smoke-${randomUUID()}`;
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    const messageId = randomUUID();

    const received = new Promise<ConsumeMessage>((resolve) => {
      void channel.consume(
        queue,
        (message) => {
          if (!message) return;
          channel.ack(message);
          resolve(message);
        },
        { noAck: false },
      );
    });
    expect(
      channel.sendToQueue(queue, Buffer.from('{"n":1}'), { messageId, persistent: false }),
    ).toBe(true);

    const message = await received;
    expect(message.content.toString()).toBe('{"n":1}');
    expect(message.properties.messageId).toBe(messageId);
    expect(message.fields.redelivered).toBe(false);

    // Acked: nothing is left for a later consumer.
    await channel.cancel(message.fields.consumerTag);
    expect(await channel.get(queue)).toBe(false);
    const { messageCount } = await channel.deleteQueue(queue);
    expect(messageCount).toBe(0);
  });
});
