import { TransportUnavailableError as CoreTransportUnavailableError } from '@idemq/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportUnavailableError } from './errors.js';
import { answerWithin } from './rpcDeadline.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('answerWithin', () => {
  it('passes an answer through and never abandons', async () => {
    const abandon = vi.fn();
    await expect(answerWithin(Promise.resolve('ok'), 1_000, 'a declare', abandon)).resolves.toBe(
      'ok',
    );
    const refused = Object.assign(new Error('PRECONDITION_FAILED'), { code: 406 });
    await expect(answerWithin(Promise.reject(refused), 1_000, 'a declare', abandon)).rejects.toBe(
      refused,
    );
    expect(abandon).not.toHaveBeenCalled();
  });

  it('abandons the channel and fails retriably when no answer comes in time', async () => {
    vi.useFakeTimers();
    const abandon = vi.fn();
    let fail: (error: Error) => void = () => undefined;
    const never = new Promise<string>((_, reject) => {
      fail = reject;
    });
    const answer = answerWithin(never, 1_000, 'basic.consume on queue "orders"', abandon);
    const outcome = answer.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(999);
    expect(abandon).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(abandon).toHaveBeenCalledTimes(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(TransportUnavailableError);
    // Core's class, re-exported: one check catches it from every adapter.
    expect(TransportUnavailableError).toBe(CoreTransportUnavailableError);
    expect((error as TransportUnavailableError).retriable).toBe(true);
    expect((error as Error).message).toMatch(/basic\.consume on queue "orders" within 1000 ms/);
    // The channel closing later rejects the call: already answered, nothing changes.
    fail(new Error('Channel ended, no reply will be forthcoming'));
    await vi.advanceTimersByTimeAsync(0);
    expect(abandon).toHaveBeenCalledTimes(1);
  });
});
