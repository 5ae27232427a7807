import { describe, expect, it } from 'vitest';
import { OffsetQueue } from './offsetQueue.js';

const at = (offset: number) => ({ offset: BigInt(offset) });
const drain = (queue: OffsetQueue<{ offset: bigint }>) => {
  const taken: number[] = [];
  for (let message = queue.shift(); message; message = queue.shift()) {
    taken.push(Number(message.offset));
  }
  return taken;
};

describe('OffsetQueue', () => {
  it('takes messages in the order pushed and puts one back at its offset', () => {
    const queue = new OffsetQueue<{ offset: bigint }>();
    for (const offset of [1, 2, 3, 5]) queue.push(at(offset));
    expect(queue.shift()?.offset).toBe(1n);
    queue.insert(at(4));
    queue.insert(at(0));
    expect(queue.length).toBe(5);
    expect(queue.peek()?.offset).toBe(0n);
    expect(drain(queue)).toEqual([0, 2, 3, 4, 5]);
    expect(queue.length).toBe(0);
    expect(queue.shift()).toBeUndefined();
  });

  it('stays in order across compactions of a long buffer', () => {
    const queue = new OffsetQueue<{ offset: bigint }>();
    for (let offset = 0; offset < 5_000; offset++) queue.push(at(offset));
    const taken: number[] = [];
    for (let i = 0; i < 3_000; i++) taken.push(Number(queue.shift()?.offset));
    queue.insert(at(2_999));
    for (let offset = 5_000; offset < 6_000; offset++) queue.push(at(offset));
    expect(queue.length).toBe(3_001);
    taken.push(...drain(queue));
    const expected = Array.from({ length: 6_000 }, (_, i) => i);
    expected.splice(3_000, 0, 2_999);
    expect(taken).toEqual(expected);
  });
});
