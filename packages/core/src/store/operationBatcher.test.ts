import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { OperationBatcher } from './operationBatcher.js';

/** A send the test answers by hand, recording each batch. */
function manualSend() {
  const batches: number[][] = [];
  const answers: Array<(result: number[] | Error) => void> = [];
  const send = (requests: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push(requests);
      answers.push((result) => (result instanceof Error ? reject(result) : resolve(result)));
    });
  const answer = (index: number, result?: Error) =>
    answers[index]?.(result ?? (batches[index] ?? []).map((n) => n * 10));
  return { send, batches, answer };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('OperationBatcher', () => {
  it('sends what one tick issued as one batch, and queues the rest behind the batches in flight', async () => {
    const { send, batches, answer } = manualSend();
    const batcher = new OperationBatcher({
      send,
      maxBatch: 3,
      inFlight: 1,
      timeoutMs: 5_000,
      what: 't',
    });
    const first = [1, 2].map((n) => batcher.run(n));
    await tick();
    expect(batches).toEqual([[1, 2]]);
    const later = [3, 4, 5, 6].map((n) => batcher.run(n));
    await tick();
    expect(batches).toHaveLength(1);
    answer(0);
    expect(await Promise.all(first)).toEqual([10, 20]);
    await tick();
    await tick();
    expect(batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    answer(1);
    // The answer's callbacks schedule the next batch for the tick after this one.
    await tick();
    await tick();
    answer(2);
    expect(await Promise.all(later)).toEqual([30, 40, 50, 60]);
    expect(batches[2]).toEqual([6]);
  });

  it('keeps inFlight batches on the wire at once', async () => {
    const { send, batches } = manualSend();
    const batcher = new OperationBatcher({
      send,
      maxBatch: 2,
      inFlight: 2,
      timeoutMs: 5_000,
      what: 't',
    });
    for (const n of [1, 2, 3, 4, 5]) void batcher.run(n);
    await tick();
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('fails every request of a batch that rejects, and goes on with the next', async () => {
    const { send, answer } = manualSend();
    const batcher = new OperationBatcher({
      send,
      maxBatch: 2,
      inFlight: 1,
      timeoutMs: 5_000,
      what: 't',
    });
    const failed = [1, 2].map((n) => batcher.run(n).catch((error: Error) => error.message));
    await tick();
    const next = batcher.run(3);
    answer(0, new Error('down'));
    expect(await Promise.all(failed)).toEqual(['down', 'down']);
    await tick();
    answer(1);
    expect(await next).toBe(30);
  });

  it('rejects a request past its deadline, queued or on the wire, with a retriable timeout', async () => {
    const { send } = manualSend();
    const batcher = new OperationBatcher({
      send,
      maxBatch: 1,
      inFlight: 1,
      timeoutMs: 30,
      what: 'claim',
    });
    const onWire = batcher.run(1).catch((error) => error);
    const queued = batcher.run(2).catch((error) => error);
    for (const error of await Promise.all([onWire, queued])) {
      expect(error).toMatchObject({
        code: ErrorCodes.STORE_UNAVAILABLE,
        reason: 'timeout',
        retriable: true,
      });
      expect(error.message).toContain('claim did not answer within 30 ms');
    }
  });
});
