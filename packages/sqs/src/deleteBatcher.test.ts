import { describe, expect, it } from 'vitest';
import { fakeClient, sqsError } from '../test/fakeClient.js';
import { DeleteBatcher } from './deleteBatcher.js';

interface Entry {
  Id: string;
  ReceiptHandle: string;
}

const entriesOf = (input: Record<string, unknown>) => input.Entries as Entry[];

describe('DeleteBatcher', () => {
  it('coalesces acks into DeleteMessageBatch calls of at most 10 entries per queue', async () => {
    const { client, calls } = fakeClient({
      DeleteMessageBatchCommand: (input) => ({
        Successful: entriesOf(input).map(({ Id }) => ({ Id })),
      }),
    });
    const batcher = new DeleteBatcher(client, 5);
    const acks = [
      ...Array.from({ length: 23 }, (_, i) => batcher.delete('q1', `h${i}`)),
      batcher.delete('q2', 'other'),
    ];
    expect(await Promise.all(acks)).toEqual(Array(24).fill('deleted'));
    const sizes = calls.map((c) => [c.input.QueueUrl, entriesOf(c.input).length]);
    expect(sizes).toEqual([
      ['q1', 10],
      ['q1', 10],
      ['q1', 3],
      ['q2', 1],
    ]);
  });

  it('reads per-entry failures: a stale receipt is gone, a server fault is retried, a client fault rejects', async () => {
    let faults = 0;
    const { client, calls } = fakeClient({
      DeleteMessageBatchCommand: (input) => {
        const entries = entriesOf(input);
        const byHandle = (handle: string) => entries.find((e) => e.ReceiptHandle === handle)?.Id;
        const failed = [];
        const successful = [];
        for (const entry of entries) {
          if (entry.ReceiptHandle === 'stale') {
            failed.push({ Id: entry.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true });
          } else if (entry.ReceiptHandle === 'flaky' && faults++ === 0) {
            failed.push({ Id: entry.Id, Code: 'InternalError', SenderFault: false });
          } else if (entry.ReceiptHandle === 'bad') {
            failed.push({ Id: entry.Id, Code: 'InvalidParameterValue', SenderFault: true });
          } else {
            successful.push({ Id: byHandle(entry.ReceiptHandle) });
          }
        }
        return { Successful: successful, Failed: failed };
      },
    });
    const batcher = new DeleteBatcher(client, 1);
    const [ok, stale, flaky, bad] = await Promise.allSettled([
      batcher.delete('q', 'ok'),
      batcher.delete('q', 'stale'),
      batcher.delete('q', 'flaky'),
      batcher.delete('q', 'bad'),
    ]);
    expect(ok).toEqual({ status: 'fulfilled', value: 'deleted' });
    expect(stale).toEqual({ status: 'fulfilled', value: 'gone' });
    expect(flaky).toEqual({ status: 'fulfilled', value: 'deleted' });
    expect(bad.status).toBe('rejected');
    expect(calls).toHaveLength(2); // the server fault went out again in a second call
  });

  it('gives up on an entry after 3 server faults', async () => {
    const { client, calls } = fakeClient({
      DeleteMessageBatchCommand: (input) => ({
        Failed: entriesOf(input).map(({ Id }) => ({
          Id,
          Code: 'InternalError',
          SenderFault: false,
        })),
      }),
    });
    await expect(new DeleteBatcher(client, 0).delete('q', 'h')).rejects.toThrow(/InternalError/);
    expect(calls).toHaveLength(3);
  });

  it('rejects every ack of a call that failed as a whole', async () => {
    const { client } = fakeClient({
      DeleteMessageBatchCommand: () => {
        throw sqsError('QueueDoesNotExist');
      },
    });
    const batcher = new DeleteBatcher(client, 0);
    const results = await Promise.allSettled([batcher.delete('q', 'a'), batcher.delete('q', 'b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('flush() sends what waits for the window and resolves once SQS answered', async () => {
    const { client, calls } = fakeClient({
      DeleteMessageBatchCommand: (input) => ({
        Successful: entriesOf(input).map(({ Id }) => ({ Id })),
      }),
    });
    const batcher = new DeleteBatcher(client, 60_000);
    const ack = batcher.delete('q', 'h');
    await batcher.flush();
    expect(calls).toHaveLength(1);
    await expect(ack).resolves.toBe('deleted');
  });
});
