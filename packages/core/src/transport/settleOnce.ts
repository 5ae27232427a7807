import type { Delivery, IncomingMessage, RejectOptions, RetryOptions } from './Transport.js';

/**
 * The broker calls behind the settlement verbs of one delivery. `settleOnce` marks the delivery
 * settled before the call returns, so a call that throws must leave the message with the broker
 * (requeued, or redelivered with its channel): nobody can settle it again.
 */
export interface NativeSettlement {
  ack(): Promise<void>;
  retry(options: RetryOptions): Promise<void>;
  reject(options: RejectOptions): Promise<void>;
  release(): Promise<void>;
  extendLease(ms: number): Promise<void>;
  /** False once the delivery can no longer be settled (connection gone, lease lapsed). */
  isValid(): boolean;
}

export interface Settlement {
  readonly settled: boolean;
  ack(): Promise<boolean>;
  retry(options?: RetryOptions): Promise<boolean>;
  reject(options: RejectOptions): Promise<boolean>;
  release(): Promise<boolean>;
  extendLease(ms: number): Promise<boolean>;
}

/**
 * Wraps an adapter's broker calls so the first settlement wins and every later one resolves
 * `false` without reaching the broker. Written once here so no adapter re-implements it.
 */
export function settleOnce(native: NativeSettlement): Settlement {
  // A plain data property, not a getter: read on every delivery, and cheaper to build.
  const settlement: { -readonly [K in keyof Settlement]: Settlement[K] } = {
    settled: false,
    ack: () => once(native.ack.bind(native)),
    retry: (options: RetryOptions = {}) => once(() => native.retry(options)),
    reject: (options: RejectOptions) => once(() => native.reject(options)),
    release: () => once(native.release.bind(native)),
    async extendLease(ms: number) {
      if (settlement.settled || !native.isValid()) return false;
      await native.extendLease(ms);
      return true;
    },
  };

  async function once(call: () => Promise<void>): Promise<boolean> {
    if (settlement.settled || !native.isValid()) {
      settlement.settled = true;
      return false;
    }
    settlement.settled = true; // before the await: a concurrent second call must see it
    await call();
    return true;
  }

  return settlement;
}

/**
 * A delivery of `message` whose verbs go through `settleOnce(native)`: the settlement object
 * itself with the message added, so `settled` stays a plain field (no getter per delivery).
 */
export function settledDelivery(message: IncomingMessage, native: NativeSettlement): Delivery {
  return Object.assign(settleOnce(native), { message });
}
