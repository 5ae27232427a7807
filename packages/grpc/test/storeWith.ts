import type { Store } from '@idemq/core';
import { completeEach } from '@idemq/core/adapter';

/**
 * `store` with some operations replaced: how the tests make a store misbehave on purpose. A
 * batch of completions goes through `complete`, replaced or not.
 */
export function storeWith(store: Store, replaced: Partial<Store>): Store {
  const wrapped: Store = {
    claim: (request) => store.claim(request),
    claimMany: (requests) => store.claimMany(requests),
    complete: (request) => store.complete(request),
    completeMany: (requests) => completeEach((request) => wrapped.complete(request), requests),
    fail: (request) => store.fail(request),
    renew: (request) => store.renew(request),
    release: (request) => store.release(request),
    inspect: (id) => store.inspect(id),
    close: () => store.close(),
    ...replaced,
  };
  return wrapped;
}
