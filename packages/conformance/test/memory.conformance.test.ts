import {
  type Capabilities,
  memoryBroker,
  memoryStore,
  memoryTransport,
  type Store,
  StoreClosedError,
} from '@idemq/core';
import {
  runStoreConformance,
  runTransportConformance,
  type TransportHarness,
} from '../src/index.js';

// Core's in-memory implementations are the reference adapters: they pass the whole suite.
runStoreConformance({
  name: 'memoryStore',
  createStore: async () => memoryStore(),
});

// Two instances on one backend (S19 runs): every store is a view of one memoryStore.
const shared = memoryStore();
runStoreConformance({
  name: 'memoryStore (views of one store)',
  createStore: async () => viewOf(shared),
  sharedBackend: true,
});

/** `store` behind a `close()` of its own, as a second client of one server would be. */
function viewOf(store: Store): Store {
  let closed = false;
  const open = <T>(call: () => Promise<T>) =>
    closed ? Promise.reject(new StoreClosedError()) : call();
  return {
    claim: (request) => open(() => store.claim(request)),
    claimMany: (requests) => open(() => store.claimMany(requests)),
    complete: (request) => open(() => store.complete(request)),
    completeMany: (requests) => open(() => store.completeMany(requests)),
    fail: (request) => open(() => store.fail(request)),
    renew: (request) => open(() => store.renew(request)),
    release: (request) => open(() => store.release(request)),
    inspect: (id) => open(() => store.inspect(id)),
    close: async () => {
      closed = true;
    },
  };
}

/**
 * What memoryTransport must declare, written out rather than read from the adapter: C00 checks
 * every connection against it, so a changed declaration fails instead of changing the checks.
 */
function expectedCapabilities(leaseMs: number | undefined): Capabilities {
  return {
    redeliveryCounter: 'exact',
    nativeDelay: { maxMs: 2 ** 31 - 1 },
    deadLetter: 'native',
    orderingScope: 'queue',
    nackBlocksKey: false,
    leaseExtension: leaseMs === undefined ? false : { maxTotalMs: Number.POSITIVE_INFINITY },
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: null,
    replayForNewGroup: false,
    releaseCountsAttempt: false,
    consumerGroups: true,
    publishDedup: false,
  };
}

let sourceCounter = 0;

/** One broker per harness; each connect() is another "process" on it. */
function memoryHarness(name: string, leaseMs?: number): TransportHarness {
  const broker = memoryBroker();
  const options = leaseMs === undefined ? { broker } : { broker, leaseMs };
  const inspector = memoryTransport({ broker });
  return {
    name,
    capabilities: expectedCapabilities(leaseMs),
    connect: async () => memoryTransport(options),
    newSource: async () => `queue-${++sourceCounter}`,
    deadLetterOf: (source) => `${source}.dlq`,
    inspect: { depth: async (destination, group) => inspector.stats(destination, group) },
    ...(leaseMs === undefined ? {} : { leaseMs }),
  };
}

runTransportConformance(memoryHarness('memoryTransport'));
// With a visibility timeout, so the lease cases (C19, C20) run too.
runTransportConformance(memoryHarness('memoryTransport (leaseMs 300)', 300));
// The consumer-level cases again with a batch handler: each delivery batch's claimed messages
// in one call, each item completed, failed and settled by its own result.
runTransportConformance({
  ...memoryHarness('memoryTransport (leaseMs 300, batch handler)', 300),
  handlers: 'batch',
  cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
});
