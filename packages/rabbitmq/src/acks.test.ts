import type { Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { type AckingChannel, ChannelAcks } from './acks.js';
import { TransportUnavailableError } from './errors.js';

/** Records the frames the batcher would send, as `ack 5 multiple` / `nack 2`. */
function recordingChannel(options: { failAcks?: boolean } = {}) {
  const frames: string[] = [];
  const channel: AckingChannel = {
    ack(message, allUpTo) {
      if (options.failAcks) throw new Error('Channel closed');
      frames.push(`ack ${message.fields.deliveryTag}${allUpTo ? ' multiple' : ''}`);
    },
    nack(message, allUpTo, requeue) {
      frames.push(
        `nack ${message.fields.deliveryTag}${allUpTo ? ' multiple' : ''}${requeue ? ' requeue' : ''}`,
      );
    },
  };
  return { channel, frames };
}

const message = (deliveryTag: number) => ({ fields: { deliveryTag } }) as Message;

function deliver(acks: ChannelAcks, tags: number[]): Map<number, Message> {
  const messages = new Map<number, Message>();
  for (const tag of tags) {
    const m = message(tag);
    messages.set(tag, m);
    acks.delivered(m);
  }
  return messages;
}

describe('ChannelAcks', () => {
  it('sends the acks of one event-loop turn as one multiple ack when they form a run from the oldest', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2, 3, 4, 5]);
    await Promise.all([5, 3, 1, 2, 4].map((tag) => acks.ack(m.get(tag) as Message)));
    expect(frames).toEqual(['ack 5 multiple']);
  });

  it('never holds an ack back behind an unsettled older delivery: those leave one by one', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2, 3, 4]);
    await Promise.all([2, 4].map((tag) => acks.ack(m.get(tag) as Message)));
    expect(frames).toEqual(['ack 2', 'ack 4']);
    await Promise.all([1, 3].map((tag) => acks.ack(m.get(tag) as Message)));
    // 2 and 4 are settled already, so the multiple ack of 3 covers exactly 1 and 3.
    expect(frames).toEqual(['ack 2', 'ack 4', 'ack 3 multiple']);
  });

  it('acks up to the first delivery still in work, and the later ones singly', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2, 3, 4, 5]);
    await Promise.all([1, 2, 4, 5].map((tag) => acks.ack(m.get(tag) as Message)));
    expect(frames).toEqual(['ack 2 multiple', 'ack 4', 'ack 5']);
  });

  it('lets a run pass over a delivery already requeued (the broker no longer holds it)', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2, 3]);
    acks.requeue(m.get(2) as Message);
    await Promise.all([1, 3].map((tag) => acks.ack(m.get(tag) as Message)));
    expect(frames).toEqual(['nack 2 requeue', 'ack 3 multiple']);
  });

  it('sends acks of different turns in different frames', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2]);
    await acks.ack(m.get(1) as Message);
    await acks.ack(m.get(2) as Message);
    expect(frames).toEqual(['ack 1 multiple', 'ack 2 multiple']);
  });

  it('rejects acks waiting when the channel closes, and every later one, with a retriable typed error', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1, 2]);
    const waiting = acks.ack(m.get(1) as Message);
    acks.close();
    await expect(waiting).rejects.toBeInstanceOf(TransportUnavailableError);
    await expect(acks.ack(m.get(2) as Message)).rejects.toMatchObject({
      code: 'IDEMQ_ERR_TRANSPORT_UNAVAILABLE',
      retriable: true,
    });
    acks.requeue(m.get(2) as Message);
    expect(frames).toEqual([]);
  });

  it('rejects the waiting acks with the cause when amqplib refuses the ack (channel closing)', async () => {
    const { channel } = recordingChannel({ failAcks: true });
    const acks = new ChannelAcks(channel);
    const m = deliver(acks, [1]);
    const error = await acks.ack(m.get(1) as Message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect((error as Error).cause).toMatchObject({ message: 'Channel closed' });
  });

  it('refuses an ack of a delivery it never saw instead of acking a stranger', async () => {
    const { channel, frames } = recordingChannel();
    const acks = new ChannelAcks(channel);
    await expect(acks.ack(message(7))).rejects.toBeInstanceOf(TransportUnavailableError);
    expect(frames).toEqual([]);
  });
});
