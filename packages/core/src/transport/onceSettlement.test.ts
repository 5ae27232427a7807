import { describe, expect, it, vi } from 'vitest';
import { OnceSettlement } from './onceSettlement.js';

/** Broker calls that record what reached them; every one that returns counts as done. */
interface BrokerCalls {
  ack(): Promise<void>;
  retry(options: unknown): Promise<void>;
  reject(options: unknown): Promise<void>;
  release(): Promise<void>;
  extendLease(ms: number): Promise<void>;
  isValid(): boolean;
}

/** `OnceSettlement` subclassed over `native`, as an adapter subclasses it over its broker. */
class OverCalls extends OnceSettlement {
  constructor(private readonly native: BrokerCalls) {
    super();
  }
  protected isValid(): boolean {
    return this.native.isValid();
  }
  protected brokerAck() {
    return this.native.ack().then(() => true);
  }
  protected brokerRetry(options: unknown) {
    return this.native.retry(options).then(() => true);
  }
  protected brokerReject(options: unknown) {
    return this.native.reject(options).then(() => true);
  }
  protected brokerRelease() {
    return this.native.release().then(() => true);
  }
  protected brokerExtendLease(ms: number) {
    return this.native.extendLease(ms).then(() => true);
  }
}

const settleOnce = (native: BrokerCalls) => new OverCalls(native);

function fakeNative(valid = true) {
  let isValid = valid;
  const native = {
    ack: vi.fn(async () => {}),
    retry: vi.fn(async (_options: unknown) => {}),
    reject: vi.fn(async (_options: unknown) => {}),
    release: vi.fn(async () => {}),
    extendLease: vi.fn(async (_ms: number) => {}),
    isValid: () => isValid,
  } satisfies BrokerCalls;
  return {
    native,
    invalidate: () => {
      isValid = false;
    },
    verbCalls: () =>
      native.ack.mock.calls.length +
      native.retry.mock.calls.length +
      native.reject.mock.calls.length +
      native.release.mock.calls.length,
  };
}

describe('OnceSettlement over broker calls', () => {
  it('starts unsettled and the first settlement wins', async () => {
    const { native, verbCalls } = fakeNative();
    const settlement = settleOnce(native);
    expect(settlement.settled).toBe(false);
    await expect(settlement.ack()).resolves.toBe(true);
    expect(settlement.settled).toBe(true);
    expect(native.ack).toHaveBeenCalledTimes(1);
    expect(verbCalls()).toBe(1);
  });

  it('a second ack resolves false and never reaches the broker', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await settlement.ack();
    await expect(settlement.ack()).resolves.toBe(false);
    expect(native.ack).toHaveBeenCalledTimes(1);
  });

  it('ack then retry: retry resolves false, native retry never called', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await settlement.ack();
    await expect(settlement.retry({ delayMs: 10 })).resolves.toBe(false);
    expect(native.retry).not.toHaveBeenCalled();
  });

  it('reject after ack resolves false, native reject never called', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await settlement.ack();
    await expect(settlement.reject({ reason: 'late' })).resolves.toBe(false);
    expect(native.reject).not.toHaveBeenCalled();
  });

  it('release after reject resolves false', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await expect(settlement.reject({ reason: 'bad', code: 'X' })).resolves.toBe(true);
    await expect(settlement.release()).resolves.toBe(false);
    expect(native.reject).toHaveBeenCalledWith({ reason: 'bad', code: 'X' });
    expect(native.release).not.toHaveBeenCalled();
  });

  it('retry passes its options through, and {} when none given', async () => {
    const first = fakeNative();
    await settleOnce(first.native).retry({ delayMs: 250 });
    expect(first.native.retry).toHaveBeenCalledWith({ delayMs: 250 });
    const second = fakeNative();
    await settleOnce(second.native).retry();
    expect(second.native.retry).toHaveBeenCalledWith({});
  });

  it('concurrent double call: exactly one reaches the broker', async () => {
    const { native, verbCalls } = fakeNative();
    let finishAck: () => void = () => {};
    native.ack.mockImplementation(
      () =>
        new Promise<void>((resolve) => {
          finishAck = resolve;
        }),
    );
    const settlement = settleOnce(native);
    const first = settlement.ack();
    const second = settlement.ack();
    const third = settlement.retry({ delayMs: 0 });
    // The losers resolve false while the winner is still waiting for the broker.
    await expect(second).resolves.toBe(false);
    await expect(third).resolves.toBe(false);
    finishAck();
    await expect(first).resolves.toBe(true);
    expect(native.ack).toHaveBeenCalledTimes(1);
    expect(verbCalls()).toBe(1);
  });

  it('many concurrent mixed settlements: one true, the rest false', async () => {
    const { native, verbCalls } = fakeNative();
    const settlement = settleOnce(native);
    const results = await Promise.all([
      settlement.retry(),
      settlement.ack(),
      settlement.reject({ reason: 'r' }),
      settlement.release(),
      settlement.ack(),
    ]);
    expect(results).toEqual([true, false, false, false, false]);
    expect(native.retry).toHaveBeenCalledTimes(1);
    expect(verbCalls()).toBe(1);
  });

  it('extendLease works while unsettled', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await expect(settlement.extendLease(5_000)).resolves.toBe(true);
    await expect(settlement.extendLease(6_000)).resolves.toBe(true);
    expect(native.extendLease.mock.calls).toEqual([[5_000], [6_000]]);
    expect(settlement.settled).toBe(false);
  });

  it('extendLease after settle resolves false and never reaches the broker', async () => {
    const { native } = fakeNative();
    const settlement = settleOnce(native);
    await settlement.release();
    await expect(settlement.extendLease(1_000)).resolves.toBe(false);
    expect(native.extendLease).not.toHaveBeenCalled();
  });

  it('an invalid delivery (connection gone, lease lapsed) resolves false for every verb', async () => {
    const { native, invalidate, verbCalls } = fakeNative();
    const settlement = settleOnce(native);
    invalidate();
    await expect(settlement.ack()).resolves.toBe(false);
    await expect(settlement.retry()).resolves.toBe(false);
    await expect(settlement.reject({ reason: 'x' })).resolves.toBe(false);
    await expect(settlement.release()).resolves.toBe(false);
    await expect(settlement.extendLease(10)).resolves.toBe(false);
    expect(verbCalls()).toBe(0);
    expect(native.extendLease).not.toHaveBeenCalled();
  });

  it('a delivery invalid from the start never reaches the broker', async () => {
    const { native, verbCalls } = fakeNative(false);
    await expect(settleOnce(native).ack()).resolves.toBe(false);
    expect(verbCalls()).toBe(0);
  });
});

/** A subclass as an adapter writes one: each broker call answers what `answer` says. */
class ScriptedSettlement extends OnceSettlement {
  valid = true;
  answer: boolean | Error = true;
  readonly calls: string[] = [];
  settledCount = 0;

  protected isValid(): boolean {
    return this.valid;
  }
  protected brokerAck() {
    return this.call('ack');
  }
  protected brokerRetry() {
    return this.call('retry');
  }
  protected brokerReject() {
    return this.call('reject');
  }
  protected brokerRelease() {
    return this.call('release');
  }
  protected brokerExtendLease() {
    return this.call('extendLease');
  }
  protected override onSettled(): void {
    this.settledCount += 1;
  }

  private async call(verb: string): Promise<boolean> {
    this.calls.push(verb);
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

describe('OnceSettlement', () => {
  it('tells onSettled once, after the first verb, and never for a lease extension', async () => {
    const settlement = new ScriptedSettlement();
    await expect(settlement.extendLease(1_000)).resolves.toBe(true);
    expect(settlement.settledCount).toBe(0);
    const first = settlement.ack();
    expect(settlement.settled).toBe(true);
    expect(settlement.settledCount).toBe(0); // the broker call has not finished yet
    await expect(first).resolves.toBe(true);
    await expect(settlement.release()).resolves.toBe(false);
    expect(settlement.settledCount).toBe(1);
    expect(settlement.calls).toEqual(['extendLease', 'ack']);
  });

  it('a broker that refuses resolves the verb false, and the delivery stays settled', async () => {
    const settlement = new ScriptedSettlement();
    settlement.answer = false;
    await expect(settlement.retry({ delayMs: 5 })).resolves.toBe(false);
    await expect(settlement.ack()).resolves.toBe(false);
    expect(settlement.calls).toEqual(['retry']);
    expect(settlement.settledCount).toBe(1);
  });

  it('a failed broker call rejects the verb and still tells onSettled once', async () => {
    const settlement = new ScriptedSettlement();
    settlement.answer = new Error('channel closed');
    await expect(settlement.reject({ reason: 'bad' })).rejects.toThrow('channel closed');
    await expect(settlement.release()).resolves.toBe(false);
    expect(settlement.settledCount).toBe(1);
  });

  it('an invalid delivery settles without a broker call and tells onSettled once', async () => {
    const settlement = new ScriptedSettlement();
    settlement.valid = false;
    await expect(settlement.extendLease(10)).resolves.toBe(false);
    await expect(settlement.ack()).resolves.toBe(false);
    await expect(settlement.ack()).resolves.toBe(false);
    expect(settlement.calls).toEqual([]);
    expect(settlement.settledCount).toBe(1);
  });
});
