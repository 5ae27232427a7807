import { StoreUnavailableError } from '../errors/store.js';
import type { Store } from '../store/store.js';

/** A store wrapper whose outage tests switch on and off. */
export interface FaultyStore extends Store {
  /** While down, every operation rejects with `StoreUnavailableError` and reaches nothing. */
  setDown(down: boolean): void;
  /** Operations attempted while down. */
  readonly refused: number;
}

/**
 * Wraps a store to simulate an outage without touching a server, for fail-closed / fail-open
 * tests of code built on idemq.
 */
export function faultyStore(inner: Store): FaultyStore {
  let down = false;
  let refused = 0;
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (down) {
        refused += 1;
        throw new StoreUnavailableError('store is down (simulated outage)');
      }
      return call(...args);
    };
  return {
    claim: guard((r) => inner.claim(r)),
    claimMany: guard((r) => inner.claimMany(r)),
    completeMany: guard((r) => inner.completeMany(r)),
    complete: guard((r) => inner.complete(r)),
    fail: guard((r) => inner.fail(r)),
    renew: guard((r) => inner.renew(r)),
    release: guard((r) => inner.release(r)),
    inspect: guard((r) => inner.inspect(r)),
    close: () => inner.close(),
    setDown(value) {
      down = value;
    },
    get refused() {
      return refused;
    },
  };
}
