/**
 * A `Store` wrapper that writes every successful claim and every accepted COMPLETED transition
 * to the ledger before the engine sees it, so the checker can tell a handler run under a real
 * claim from one that was not. `crash()` models a dead process: every later call hangs forever.
 */
import type { CompleteRequest, Store } from '@idemq/core';
import { completeEach } from '@idemq/core/adapter';
import type { Ledger } from './ledger.js';

export interface TrackedStore extends Store {
  /** From now on every call hangs, as it would in a process that no longer exists. */
  crash(): void;
}

const never = <T>() => new Promise<T>(() => undefined);

export function trackedStore(inner: Store, ledger: Ledger): TrackedStore {
  let crashed = false;
  const guard = <T>(call: () => Promise<T>): Promise<T> => (crashed ? never<T>() : call());
  const complete = (request: CompleteRequest) =>
    guard(async () => {
      const outcome = await inner.complete(request);
      if (outcome === 'ok') await ledger.recordCompletion(request.requestId);
      return outcome;
    });
  return {
    crash() {
      crashed = true;
    },
    claim: (request) =>
      guard(async () => {
        const outcome = await inner.claim(request);
        if (crashed) return never();
        if (outcome.status === 'claimed') {
          await ledger.recordClaim(request.requestId, outcome.fencingToken);
        }
        return outcome;
      }),
    claimMany: (requests) =>
      guard(async () => {
        const outcomes = await inner.claimMany(requests);
        if (crashed) return never();
        await Promise.all(
          outcomes.map((outcome, i) =>
            outcome.status === 'claimed'
              ? ledger.recordClaim(requests[i]!.requestId, outcome.fencingToken)
              : undefined,
          ),
        );
        return outcomes;
      }),
    complete,
    // Through this wrapper's own completion, so every batched completion reaches the ledger too.
    completeMany: (requests) => completeEach(complete, requests),
    fail: (request) => guard(() => inner.fail(request)),
    renew: (request) => guard(() => inner.renew(request)),
    release: (request) => guard(() => inner.release(request)),
    inspect: (key) => inner.inspect(key),
    close: () => inner.close(),
  };
}
