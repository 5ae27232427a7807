import type { Store } from '@idemq/core';

/** `store` with some operations replaced: how the tests make a store misbehave on purpose. */
export function storeWith(store: Store, replaced: Partial<Store>): Store {
  return {
    claim: (request) => store.claim(request),
    claimMany: (requests) => store.claimMany(requests),
    complete: (request) => store.complete(request),
    fail: (request) => store.fail(request),
    renew: (request) => store.renew(request),
    release: (request) => store.release(request),
    inspect: (id) => store.inspect(id),
    close: () => store.close(),
    ...replaced,
  };
}
