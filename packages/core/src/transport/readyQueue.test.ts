import { describe, expect, it } from 'vitest';
import { ReadyQueue } from './readyQueue.js';

describe('ReadyQueue', () => {
  it('is first in, first out, with unshift putting an item next in line', () => {
    const queue = new ReadyQueue<number>();
    queue.push(1, 2, 3);
    expect(queue.shift()).toBe(1);
    queue.unshift(9);
    queue.unshift(8);
    expect(queue.length).toBe(4);
    expect([queue.shift(), queue.shift(), queue.shift(), queue.shift()]).toEqual([8, 9, 2, 3]);
    expect(queue.shift()).toBeUndefined();
    expect(queue.length).toBe(0);
  });

  it('keeps order and length across compactions while items keep coming', () => {
    const queue = new ReadyQueue<number>();
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 300; i++) queue.push(next++);
      for (let i = 0; i < 200; i++) out.push(queue.shift() as number);
    }
    expect(queue.length).toBe(next - out.length);
    while (queue.length > 0) out.push(queue.shift() as number);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
  });
});
