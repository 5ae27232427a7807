import { PublishFailedError as CorePublishFailedError } from '@idemq/core';
import type { ConfirmChannel, Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { ConfirmTracker, NACK_RETRY_PAUSES_MS } from './confirms.js';
import { PublishFailedError } from './errors.js';

type Callback = (error: unknown) => void;

/** A confirm channel that confirms only when the test says so, as a stalled queue would. */
function stallingChannel() {
  const confirms: Callback[] = [];
  let nackAll = false;
  let onReturn: ((message: Message) => void) | undefined;
  const channel = {
    on(event: string, listener: (message: Message) => void) {
      if (event === 'return') onReturn = listener;
      return channel;
    },
    publish(_exchange: string, _key: string, _content: Buffer, _options: unknown, cb: Callback) {
      confirms.push(cb);
      if (nackAll) queueMicrotask(() => cb(new Error('message nacked')));
      return true;
    },
  };
  return {
    channel: channel as unknown as ConfirmChannel,
    confirm: (i: number, error?: unknown) => confirms[i]?.(error),
    /** Every publish, this one and later ones, is nacked as soon as it is made. */
    nackAll: () => {
      nackAll = true;
    },
    published: () => confirms.length,
    returnMessage: (exchange: string, routingKey: string, messageId: string) =>
      onReturn?.({
        content: Buffer.from(''),
        fields: { exchange, routingKey },
        properties: { messageId, headers: {} },
      } as unknown as Message),
  };
}

describe('ConfirmTracker', () => {
  it("rejects with core's PublishFailedError, so one check catches it from every adapter", () => {
    expect(PublishFailedError).toBe(CorePublishFailedError);
  });

  it('resolves once the broker confirms', async () => {
    const fake = stallingChannel();
    const tracker = new ConfirmTracker(fake.channel, 1_000);
    const publishing = tracker.publish('', 'q', Buffer.from('x'), { messageId: 'a' });
    fake.confirm(0);
    await expect(publishing).resolves.toBeUndefined();
  });

  it('fails a publish the broker never confirms as unconfirmed after confirmTimeoutMs', async () => {
    const fake = stallingChannel();
    const tracker = new ConfirmTracker(fake.channel, 60);
    const startedAt = performance.now();
    const error = await tracker
      .publish('ex', 'q', Buffer.from('x'), { messageId: 'a' })
      .catch((e: unknown) => e);
    const waitedMs = performance.now() - startedAt;
    expect(error).toBeInstanceOf(PublishFailedError);
    expect((error as PublishFailedError).failure).toBe('unconfirmed');
    expect(error).toMatchObject({ destination: 'ex', requestId: 'a', retriable: true });
    expect((error as Error).message).toMatch(/did not confirm .* within 60 ms/);
    expect(waitedMs).toBeGreaterThanOrEqual(55);
    expect(waitedMs).toBeLessThan(1_000);
    // The confirm that comes after all changes nothing (the promise is settled once).
    expect(() => fake.confirm(0)).not.toThrow();
  });

  it('times each publish from its own start, and a confirmed one never times out', async () => {
    const fake = stallingChannel();
    const tracker = new ConfirmTracker(fake.channel, 80);
    const first = tracker.publish('', 'q', Buffer.from('x'), { messageId: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 40));
    const second = tracker.publish('', 'q', Buffer.from('x'), { messageId: 'b' });
    fake.confirm(0);
    await expect(first).resolves.toBeUndefined();
    const secondStartedAt = performance.now();
    await expect(second).rejects.toMatchObject({ failure: 'unconfirmed' });
    expect(performance.now() - secondStartedAt).toBeGreaterThanOrEqual(35);
  });

  it('rejects a returned message as unroutable at once', async () => {
    const fake = stallingChannel();
    const tracker = new ConfirmTracker(fake.channel, 1_000);
    const returned = tracker.publish('ex', '', Buffer.from('x'), { messageId: 'a' });
    fake.returnMessage('ex', '', 'a');
    fake.confirm(0);
    await expect(returned).rejects.toMatchObject({ failure: 'unroutable' });
    expect(fake.published()).toBe(1);
  });

  it('publishes a nacked message again after each pause, and rejects as nacked after the last try', async () => {
    const fake = stallingChannel();
    fake.nackAll();
    const tracker = new ConfirmTracker(fake.channel, 1_000);
    const startedAt = performance.now();
    const error = await tracker
      .publish('ex', '', Buffer.from('x'), { messageId: 'b' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PublishFailedError);
    expect(error).toMatchObject({ failure: 'nacked', destination: 'ex', requestId: 'b' });
    expect(fake.published()).toBe(NACK_RETRY_PAUSES_MS.length + 1);
    const pausesMs = NACK_RETRY_PAUSES_MS.reduce((sum, ms) => sum + ms, 0);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(pausesMs - 5);
    expect(pausesMs).toBeLessThan(1_000);
  });

  it('resolves once a later try is confirmed', async () => {
    const fake = stallingChannel();
    const tracker = new ConfirmTracker(fake.channel, 1_000);
    const publishing = tracker.publish('ex', '', Buffer.from('x'), { messageId: 'c' });
    fake.confirm(0, new Error('message nacked'));
    while (fake.published() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    fake.confirm(1);
    await expect(publishing).resolves.toBeUndefined();
    expect(fake.published()).toBe(2);
  });
});
