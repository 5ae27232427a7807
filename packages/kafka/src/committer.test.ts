import { silentLogger } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import type { OffsetCommit } from './client.js';
import { Committer } from './committer.js';
import { type LaneMessage, PartitionLane } from './partitionWorker.js';

function laneWithDone(partition: number, offsets: number[]): PartitionLane {
  const lane = new PartitionLane('t', partition, 't', false, { concurrency: 10 });
  lane.takeoverEnd = 0n;
  const messages: LaneMessage[] = offsets.map((offset, seq) => ({
    offset: BigInt(offset),
    record: { offset: String(offset), key: null, value: null, timestamp: '0' },
    seq,
    timestampMs: 0,
    attempt: 1,
    redelivered: false,
    notBefore: 0,
  }));
  lane.accept(messages, BigInt(offsets.at(-1) ?? 0));
  for (const _ of messages) {
    lane.next(0);
    lane.complete(lane.take());
  }
  return lane;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Committer', () => {
  it('coalesces requests into one commit per round, and never commits a revoked partition', async () => {
    const sent: OffsetCommit[][] = [];
    const committer = new Committer(async (offsets) => {
      sent.push([...offsets]);
    }, silentLogger);
    const kept = laneWithDone(0, [0, 1, 2]);
    const moved = laneWithDone(1, [0, 1]);
    committer.request(kept);
    committer.request(moved);
    moved.end('revoked'); // the rebalance took it before the commit went out
    await tick();
    await committer.flush();
    expect(sent).toEqual([[{ topic: 't', partition: 0, offset: '3' }]]);
    expect(kept.committed).toBe(3n);
  });

  // Regression: the retry timer was cleared with clearImmediate, which broke Node's immediate
  // queue, so the retried commit (and every later setImmediate) never ran.
  it('tries a failed commit again, and holds everything while a rebalance is announced', async () => {
    let failures = 1;
    const sent: OffsetCommit[][] = [];
    const committer = new Committer(async (offsets) => {
      if (failures-- > 0) throw new Error('REBALANCE_IN_PROGRESS');
      sent.push([...offsets]);
    }, silentLogger);
    const lane = laneWithDone(0, [0]);
    committer.suspend();
    committer.request(lane);
    await tick();
    expect(sent).toEqual([]);
    committer.resume();
    await committer.flush();
    expect(sent).toEqual([[{ topic: 't', partition: 0, offset: '1' }]]);
  });

  it('keeps minIntervalMs between commits, gathering what comes meanwhile; flush does not wait', async () => {
    const sent: { at: number; offsets: OffsetCommit[] }[] = [];
    const committer = new Committer(
      async (offsets) => {
        sent.push({ at: performance.now(), offsets: [...offsets] });
      },
      silentLogger,
      80,
    );
    committer.request(laneWithDone(0, [0]));
    await tick();
    expect(sent).toHaveLength(1); // the first goes out at once
    committer.request(laneWithDone(1, [0, 1]));
    await tick();
    committer.request(laneWithDone(2, [0, 1, 2]));
    await tick();
    expect(sent).toHaveLength(1); // held back by the interval
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(sent).toHaveLength(2);
    expect(sent[1]?.offsets.map((o) => o.partition).sort()).toEqual([1, 2]);
    expect((sent[1]?.at ?? 0) - (sent[0]?.at ?? 0)).toBeGreaterThanOrEqual(78);

    committer.request(laneWithDone(3, [0]));
    const flushing = performance.now();
    await committer.flush();
    expect(sent).toHaveLength(3);
    expect(performance.now() - flushing).toBeLessThan(60);
  });
});
