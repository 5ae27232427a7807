import { describe, expect, it } from 'vitest';
import { PublishWindow } from './publishWindow.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('PublishWindow', () => {
  it('never has more than `size` publishes in flight, and drain waits for all of them', async () => {
    const window = new PublishWindow(2);
    const calls = [deferred(), deferred(), deferred()];
    let started = 0;
    const start = (n: number) => () => {
      started++;
      return calls[n]!.promise;
    };
    await window.add(start(0));
    await window.add(start(1));
    const third = window.add(start(2));
    await Promise.resolve();
    expect(started).toBe(2);
    calls[1]!.resolve();
    await third;
    expect(started).toBe(3);
    let drained = false;
    const draining = window.drain().then(() => {
      drained = true;
    });
    calls[0]!.resolve();
    await Promise.resolve();
    expect(drained).toBe(false);
    calls[2]!.resolve();
    await draining;
    expect(drained).toBe(true);
  });

  it('throws the first failure from the next add and from drain; nothing more is started', async () => {
    const window = new PublishWindow(4);
    const failing = deferred();
    await window.add(() => failing.promise);
    failing.reject(new Error('broker down'));
    await expect(window.drain()).rejects.toThrow('broker down');
    let startedAfter = false;
    const next = window.add(async () => {
      startedAfter = true;
    });
    await expect(next).rejects.toThrow('broker down');
    expect(startedAfter).toBe(false);
  });

  it('refuses a size below 1', () => {
    expect(() => new PublishWindow(0)).toThrow(RangeError);
  });
});
