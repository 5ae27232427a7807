import { type Capabilities, memoryBroker, memoryStore, memoryTransport } from '@idemq/core';
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
