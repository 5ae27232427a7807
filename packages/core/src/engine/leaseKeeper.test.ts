import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../store/memoryStore.js';
import type { Store, TransitionOutcome } from '../store/store.js';
import { RenewalScheduler } from './leaseKeeper.js';

/** A store whose `renew` answers what the test says, and remembers when it was asked. */
function renewStore(answer: () => Promise<TransitionOutcome>) {
  const calls: { requestId: string; at: number }[] = [];
  const store: Store = {
    ...memoryStore(),
    renew: (request) => {
      calls.push({ requestId: request.requestId, at: performance.now() });
      return answer();
    },
  };
  return { store, calls };
}

function hold(scheduler: RenewalScheduler, requestId: string, leaseMs: number) {
  const events = { renewed: 0, lost: 0 };
  const keeper = scheduler.keep(
    { scope: 's', requestId, token: `t-${requestId}` },
    leaseMs,
    performance.now(),
    {
      leaseRenewed: () => {
        events.renewed += 1;
      },
      leaseLost: () => {
        events.lost += 1;
      },
    },
  );
  return { keeper, events };
}

describe('RenewalScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('renews every held lease before it lapses, together, and never a stopped one', async () => {
    const { store, calls } = renewStore(async () => 'ok');
    const scheduler = new RenewalScheduler(store);
    const held = Array.from({ length: 50 }, (_, i) => hold(scheduler, `m${i}`, 3_000));
    const stopped = hold(scheduler, 'done', 3_000);
    stopped.keeper.stop();
    expect(scheduler.size).toBe(50);

    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // All 50 in the same sweep (same instant), one interval (leaseMs / 3) after the claim.
    expect(calls).toHaveLength(50);
    expect(new Set(calls.map((c) => c.at))).toEqual(new Set([1_000]));

    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls.filter((c) => c.requestId === 'm7').map((c) => c.at)).toEqual([
      1_000, 2_000, 3_000, 4_000, 5_000, 6_000,
    ]);
    expect(calls.some((c) => c.requestId === 'done')).toBe(false);
    for (const { events, keeper } of held) {
      expect(events).toEqual({ renewed: 6, lost: 0 });
      expect(keeper.remainingMs()).toBe(3_000); // renewed just now
    }
    for (const { keeper } of held) keeper.stop();
    expect(scheduler.size).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toHaveLength(300);
  });

  it('a lease added later is renewed on its own schedule, and a renewal may come early, never late', async () => {
    const { store, calls } = renewStore(async () => 'ok');
    const scheduler = new RenewalScheduler(store);
    hold(scheduler, 'first', 3_000);
    await vi.advanceTimersByTimeAsync(200);
    hold(scheduler, 'second', 3_000); // due at 1 200, within a quarter interval of 1 000
    await vi.advanceTimersByTimeAsync(2_000);
    const at = (id: string) => calls.filter((c) => c.requestId === id).map((c) => c.at);
    expect(at('first')).toEqual([1_000, 2_000]);
    // Renewed with the first (200 ms early), then every interval from there.
    expect(at('second')).toEqual([1_000, 2_000]);
    for (const renewedAt of at('second')) expect(renewedAt).toBeLessThanOrEqual(1_200 + 1_000);
  });

  it('a refused renewal reports the lease lost once, and renewing stops', async () => {
    let answer: TransitionOutcome = 'ok';
    const { store, calls } = renewStore(async () => answer);
    const scheduler = new RenewalScheduler(store);
    const { events } = hold(scheduler, 'taken', 300);
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toEqual({ renewed: 1, lost: 0 });
    answer = 'lease-lost';
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toEqual({ renewed: 1, lost: 1 });
    expect(scheduler.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(2);
    expect(events.lost).toBe(1);
  });

  it('failing renewals lose the lease only once none succeeded for a whole lease', async () => {
    const { store, calls } = renewStore(async () => {
      throw new Error('store down');
    });
    const scheduler = new RenewalScheduler(store);
    const { events, keeper } = hold(scheduler, 'unconfirmed', 300);
    await vi.advanceTimersByTimeAsync(299);
    expect(events.lost).toBe(0);
    expect(calls.map((c) => c.at)).toEqual([100, 200]);
    expect(keeper.remainingMs()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.at)).toEqual([100, 200, 300]);
    expect(events).toEqual({ renewed: 0, lost: 1 });
    expect(keeper.remainingMs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(3);
  });
});
