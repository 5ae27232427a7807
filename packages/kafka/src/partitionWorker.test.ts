import { afterEach, describe, expect, it, vi } from 'vitest';
import { type LaneMessage, PartitionLane } from './partitionWorker.js';

let seq = 0;
function message(offset: number, notBefore = 0): LaneMessage {
  return {
    offset: BigInt(offset),
    record: { offset: String(offset), key: null, value: null, timestamp: '0' },
    seq: ++seq,
    timestampMs: 0,
    attempt: 1,
    redelivered: false,
    notBefore,
  };
}

function lane(concurrency: number): PartitionLane {
  const created = new PartitionLane('t', 0, 't', false, { concurrency });
  created.takeoverEnd = 0n;
  return created;
}

function take(from: PartitionLane): LaneMessage {
  const next = from.next(Date.now());
  if (typeof next !== 'object') throw new Error(`nothing to take (${String(next)})`);
  return from.take();
}

afterEach(() => {
  vi.useRealTimers();
});

describe('PartitionLane', () => {
  it('in order: the next message waits for the previous one to be settled', () => {
    const ordered = lane(1);
    ordered.accept([message(0), message(1)], 1n);
    const first = take(ordered);
    expect(ordered.next(Date.now())).toBeUndefined();
    ordered.complete(first);
    expect(take(ordered).offset).toBe(1n);
  });

  it('in order: a message waiting out its retry delay blocks the partition', () => {
    vi.useFakeTimers();
    const ordered = lane(1);
    ordered.accept([message(0), message(1)], 1n);
    const first = take(ordered);
    let due = false;
    ordered.hold(first, 100, () => {
      due = true;
    });
    expect(ordered.next(Date.now())).toBeUndefined();
    vi.advanceTimersByTime(100);
    expect(due).toBe(true);
    expect(take(ordered).offset).toBe(0n);
  });

  it('concurrently: a held message steps aside and comes back first, in offset order', () => {
    vi.useFakeTimers();
    const parallel = lane(4);
    parallel.accept([message(0), message(1), message(2)], 2n);
    const first = take(parallel);
    parallel.hold(first, 50, () => {});
    expect(take(parallel).offset).toBe(1n);
    vi.advanceTimersByTime(50);
    expect(take(parallel).offset).toBe(0n);
    expect(take(parallel).offset).toBe(2n);
  });

  it('concurrently: out-of-order completions commit the contiguous prefix only', () => {
    const parallel = lane(4);
    parallel.accept([message(5), message(6), message(7)], 7n);
    const [a, b, c] = [take(parallel), take(parallel), take(parallel)];
    expect(parallel.complete(c)).toBe(false);
    expect(parallel.complete(b)).toBe(false);
    expect(parallel.committable).toBe(5n);
    expect(parallel.complete(a)).toBe(true);
    expect(parallel.committable).toBe(8n);
  });

  it('hands nothing out before the takeover point is known, nor before a not-before time', () => {
    const fresh = new PartitionLane('t', 0, 't', true, { concurrency: 1 });
    fresh.accept([message(0, Date.now() + 60_000)], 0n);
    expect(fresh.next(Date.now())).toBeUndefined();
    fresh.takeoverEnd = 0n;
    expect(typeof fresh.next(Date.now())).toBe('number');
  });

  it('drops refetched offsets, and everything once ended', () => {
    const kept = lane(1);
    expect(kept.accept([message(0), message(1)], 1n)).toBe(2);
    expect(kept.accept([message(0), message(1), message(2)], 2n)).toBe(1);
    kept.end('revoked');
    expect(kept.buffered).toBe(0);
    expect(kept.next(Date.now())).toBeUndefined();
  });
});
