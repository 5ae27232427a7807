import { describe, expect, it } from 'vitest';
import { ChunkQueue } from './chunkQueue.js';

const bytes = (length: number) => new Uint8Array(length).fill(1);

describe('ChunkQueue', () => {
  it('yields the chunks in order and ends once closed', async () => {
    const queue = new ChunkQueue(1024, () => {});
    queue.push(Uint8Array.of(1));
    queue.push(Uint8Array.of(2, 3));
    queue.close();
    const read: number[] = [];
    for await (const chunk of queue) read.push(...chunk);
    expect(read).toEqual([1, 2, 3]);
  });

  it('waits for chunks pushed later', async () => {
    const queue = new ChunkQueue(1024, () => {});
    const reading = (async () => {
      const read: number[] = [];
      for await (const chunk of queue) read.push(...chunk);
      return read;
    })();
    await new Promise((resolve) => setTimeout(resolve, 5));
    queue.push(Uint8Array.of(9));
    queue.close();
    expect(await reading).toEqual([9]);
  });

  it('has no room past the high-water mark and drains once the reader caught up', async () => {
    let drains = 0;
    const queue = new ChunkQueue(10, () => {
      drains += 1;
    });
    queue.push(bytes(6));
    expect(queue.hasRoom()).toBe(true);
    queue.push(bytes(6));
    expect(queue.hasRoom()).toBe(false);
    const iterator = queue[Symbol.asyncIterator]();
    await iterator.next();
    expect(drains).toBe(1);
    expect(queue.hasRoom()).toBe(true);
    await iterator.next();
    expect(drains).toBe(1);
  });

  it('drops what a reader that left will never read, and never holds the writer again', async () => {
    let drains = 0;
    const queue = new ChunkQueue(4, () => {
      drains += 1;
    });
    queue.push(bytes(8));
    expect(queue.hasRoom()).toBe(false);
    const iterator = queue[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.return?.(undefined);
    queue.push(bytes(8));
    expect(queue.hasRoom()).toBe(true);
    expect(drains).toBe(1);
  });
});
