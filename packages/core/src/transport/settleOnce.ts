import type { RejectOptions, RetryOptions } from './Transport.js';

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
  let settled = false;

  function once<A extends unknown[]>(
    call: (...args: A) => Promise<void>,
  ): (...args: A) => Promise<boolean> {
    return async (...args) => {
      if (settled || !native.isValid()) {
        settled = true;
        return false;
      }
      settled = true; // before the await: a concurrent second call must see it
      await call(...args);
      return true;
    };
  }

  return {
    get settled() {
      return settled;
    },
    ack: once(() => native.ack()),
    retry: once((options: RetryOptions = {}) => native.retry(options)),
    reject: once((options: RejectOptions) => native.reject(options)),
    release: once(() => native.release()),
    async extendLease(ms: number) {
      if (settled || !native.isValid()) return false;
      await native.extendLease(ms);
      return true;
    },
  };
}
