import type { Message } from '@aws-sdk/client-sqs';
import type { RejectOptions } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { fakeClient, sqsError } from '../test/fakeClient.js';
import { Attributes } from './attributes.js';
import { DeleteBatcher } from './deleteBatcher.js';
import { Receipt, type SettledFate, SqsDelivery, toIncoming } from './delivery.js';
import { DelayTooLongError, MAX_VISIBILITY_MS } from './errors.js';

const message: Message = {
  MessageId: 'm-1',
  ReceiptHandle: 'handle-1',
  Body: '{"n":1}',
  Attributes: { ApproximateReceiveCount: '2', SentTimestamp: '1700000000000', MessageGroupId: 'g' },
  MessageAttributes: {
    [Attributes.requestId]: { DataType: 'String', StringValue: 'r-1' },
    [Attributes.contentType]: { DataType: 'String', StringValue: 'application/json' },
  },
};

function setup(
  options: {
    answers?: Parameters<typeof fakeClient>[0];
    receivedAgoMs?: number;
    visibilityMs?: number;
    deadLetter?: (options: RejectOptions) => Promise<void>;
  } = {},
) {
  const { client, calls } = fakeClient({
    DeleteMessageBatchCommand: (input) => ({
      Successful: (input.Entries as Array<{ Id: string }>).map(({ Id }) => ({ Id })),
    }),
    ...options.answers,
  });
  const now = performance.now();
  const receivedAt = now - (options.receivedAgoMs ?? 0);
  const receipt = new Receipt('q', 'handle-1', receivedAt, now + (options.visibilityMs ?? 30_000));
  const fates: SettledFate[] = [];
  let open = true;
  const deadLetters: RejectOptions[] = [];
  const delivery = new SqsDelivery(
    {
      client,
      deleter: new DeleteBatcher(client, 0),
      queue: { url: 'q', name: 'q', fifo: false },
      source: 'orders',
      isOpen: () => open,
      deadLetter: async (_message, reject) => {
        deadLetters.push(reject);
        await options.deadLetter?.(reject);
      },
      onSettled: (_received, fate) => fates.push(fate),
    },
    { message, receipt, group: undefined },
    toIncoming(message, 'orders', false),
  );
  return { delivery, calls, receipt, fates, deadLetters, close: () => (open = false) };
}

describe('toIncoming', () => {
  it('reads requestId, body, content type, publish time and the approximate attempt', () => {
    expect(toIncoming(message, 'orders', false)).toMatchObject({
      requestId: 'r-1',
      source: 'orders',
      contentType: 'application/json',
      publishedAt: 1_700_000_000_000,
      attempt: 2,
      attemptSource: 'approximate',
      redelivered: true,
    });
  });

  it('takes the FIFO group as key only for messages of other producers', () => {
    expect(toIncoming(message, 'q', true).key).toBeUndefined();
    const foreign = { ...message, MessageAttributes: {} };
    expect(toIncoming(foreign, 'q', true)).toMatchObject({ key: 'g', requestId: undefined });
    expect(toIncoming(foreign, 'q', false).key).toBeUndefined();
  });
});

describe('SqsDelivery', () => {
  it('ack deletes once; every later verb resolves false without calling SQS', async () => {
    const { delivery, calls, fates } = setup();
    expect(await delivery.ack()).toBe(true);
    expect(await delivery.ack()).toBe(false);
    expect(await delivery.retry({ delayMs: 5 })).toBe(false);
    expect(await delivery.reject({ reason: 'x' })).toBe(false);
    expect(await delivery.release()).toBe(false);
    expect(await delivery.extendLease(1_000)).toBe(false);
    expect(calls.map((c) => c.command)).toEqual(['DeleteMessageBatchCommand']);
    expect(fates).toEqual(['removed']);
  });

  it('retry rounds the delay up to whole seconds of visibility; release sets 0', async () => {
    const retried = setup();
    expect(await retried.delivery.retry({ delayMs: 1_200 })).toBe(true);
    expect(retried.calls[0]?.input).toMatchObject({
      ReceiptHandle: 'handle-1',
      VisibilityTimeout: 2,
    });
    expect(retried.fates).toEqual(['returned']);
    const released = setup();
    expect(await released.delivery.release()).toBe(true);
    expect(released.calls[0]?.input).toMatchObject({ VisibilityTimeout: 0 });
  });

  it('refuses a delay past 12 h from the receive with DelayTooLongError and stays unsettled', async () => {
    const { delivery, calls } = setup({ receivedAgoMs: 60 * 60 * 1000 });
    await expect(delivery.retry({ delayMs: MAX_VISIBILITY_MS })).rejects.toBeInstanceOf(
      DelayTooLongError,
    );
    const elevenHoursMs = 11 * 60 * 60 * 1000;
    const refused = await delivery.retry({ delayMs: elevenHoursMs + 1_000 }).catch((e) => e);
    expect(refused).toMatchObject({ code: 'IDEMQ_ERR_DELAY_TOO_LONG' });
    // Whole seconds left, counted from the receive: just under 11 h by now.
    expect(refused.maxDelayMs).toBeLessThanOrEqual(elevenHoursMs);
    expect(refused.maxDelayMs).toBeGreaterThan(elevenHoursMs - 2_000);
    expect(delivery.settled).toBe(false);
    expect(calls).toEqual([]);
    expect(await delivery.retry({ delayMs: 60_000 })).toBe(true);
  });

  it('extendLease caps the visibility at 12 h from the receive and moves the local deadline', async () => {
    const { delivery, calls, receipt } = setup({ receivedAgoMs: MAX_VISIBILITY_MS - 10_000 });
    expect(await delivery.extendLease(60_000)).toBe(true);
    // 10 s were left at the receive's 12 h mark; a few ms went by since.
    expect(calls[0]?.input.VisibilityTimeout).toBeOneOf([9, 10]);
    expect(receipt.deadline).toBeGreaterThan(performance.now() + 8_000);
    const spent = setup({ receivedAgoMs: MAX_VISIBILITY_MS });
    expect(await spent.delivery.extendLease(60_000)).toBe(false);
    expect(spent.calls).toEqual([]);
  });

  it('a receipt SQS no longer knows makes the verb resolve false and the delivery lost', async () => {
    const gone = {
      ChangeMessageVisibilityCommand: () => Promise.reject(sqsError('ReceiptHandleIsInvalid')),
    };
    const extended = setup({ answers: gone });
    expect(await extended.delivery.extendLease(1_000)).toBe(false);
    expect(extended.receipt.lost).toBe(true);
    expect(await extended.delivery.ack()).toBe(false);
    const retried = setup({ answers: gone });
    expect(await retried.delivery.retry()).toBe(false);
    expect(retried.fates).toEqual(['returned']);
  });

  it('a lapsed visibility or a closed subscription settles nothing', async () => {
    const lapsed = setup({ visibilityMs: -1 });
    expect(await lapsed.delivery.ack()).toBe(false);
    expect(lapsed.calls).toEqual([]);
    expect(lapsed.fates).toEqual(['returned']);
    const closed = setup();
    closed.close();
    expect(await closed.delivery.release()).toBe(false);
    expect(closed.calls).toEqual([]);
  });

  it('reject sends the dead letter first and deletes only after it is safe', async () => {
    const ok = setup();
    expect(await ok.delivery.reject({ reason: 'bad', code: 'IDEMQ_ERR_X' })).toBe(true);
    expect(ok.deadLetters).toEqual([{ reason: 'bad', code: 'IDEMQ_ERR_X' }]);
    expect(ok.calls.map((c) => c.command)).toEqual(['DeleteMessageBatchCommand']);
    expect(ok.fates).toEqual(['removed']);

    const failing = setup({ deadLetter: () => Promise.reject(sqsError('QueueDoesNotExist')) });
    await expect(failing.delivery.reject({ reason: 'bad' })).rejects.toThrow('QueueDoesNotExist');
    expect(failing.calls).toEqual([]); // nothing deleted: the message comes back, nothing lost
  });

  it('a broker error on a verb rejects (the message comes back by itself)', async () => {
    const { delivery, fates } = setup({
      answers: { ChangeMessageVisibilityCommand: () => Promise.reject(sqsError('InternalError')) },
    });
    await expect(delivery.release()).rejects.toThrow('InternalError');
    expect(delivery.settled).toBe(true);
    expect(fates).toEqual(['returned']);
  });
});
