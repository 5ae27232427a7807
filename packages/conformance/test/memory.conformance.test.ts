import { memoryBroker, memoryStore, memoryTransport } from '@idemq/core';
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

let sourceCounter = 0;

/** One broker per harness; each connect() is another "process" on it. */
function memoryHarness(name: string, leaseMs?: number): TransportHarness {
  const broker = memoryBroker();
  const options = leaseMs === undefined ? { broker } : { broker, leaseMs };
  const inspector = memoryTransport({ broker });
  return {
    name,
    capabilities: memoryTransport(options).capabilities,
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
