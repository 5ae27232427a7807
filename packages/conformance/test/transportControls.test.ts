import {
  type MemoryBroker,
  memoryBroker,
  memoryStore,
  memoryTransport,
  type Store,
} from '@idemq/core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CaseResult,
  describeFailedCases,
  failedCaseIds,
  runCollectedCases,
  type TransportHarness,
} from '../src/index.js';
import { collectTransportCases } from '../src/transport/runTransportConformance.js';
import {
  AckOnReceiptBroker,
  ackOnReceipt,
  attemptBlindStore,
  type BreakTransport,
  dropsBufferOnClose,
  keepsFetching,
  NoDelayBroker,
  noCounter,
  noopAck,
  resolvesBeforeConfirm,
  stuckAttempt,
} from './controls/transportControls.js';

// The transport suite is trusted because it fails on transports that break its rules: each
// control below is core's memory transport with one rule broken, and names the cases that catch
// it. The reference transport runs through the same cases, with the same timing, and passes.

/** One timing for every run: a case that fails on a control does not fail for want of time. */
const timing = { waitMs: 2_500, caseTimeoutMs: 10_000 };
const LEASE_MS = 300;
/** Cases of every run share one pool: memory cases mostly wait on timers, not the CPU. */
const CONCURRENCY = 24;

let sources = 0;

interface Variant {
  /** The broker lease, for the controls a lapsed lease shows (and the reference's lease run). */
  leaseMs?: number;
  broker?: () => MemoryBroker;
  breakTransport?: BreakTransport;
  createStore?: () => Promise<Store>;
}

function harness(name: string, variant: Variant): TransportHarness {
  const broker = variant.broker?.() ?? memoryBroker();
  const { leaseMs } = variant;
  const options = leaseMs === undefined ? { broker } : { broker, leaseMs };
  const connect = () => {
    const transport = memoryTransport(options);
    return variant.breakTransport?.(transport, broker) ?? transport;
  };
  const inspector = memoryTransport({ broker });
  const probe = connect();
  void probe.close();
  return {
    name,
    capabilities: probe.capabilities,
    connect: async () => connect(),
    newSource: async () => `control-${++sources}`,
    deadLetterOf: (source) => `${source}.dlq`,
    inspect: { depth: async (destination, group) => inspector.stats(destination, group) },
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(variant.createStore ? { createStore: variant.createStore } : {}),
    timing,
  };
}

interface Run {
  name: string;
  variant: Variant;
  /** Ids of the cases that must fail; empty: every case must pass. */
  caughtBy: string[];
}

const runs: Run[] = [
  { name: 'reference', variant: {}, caughtBy: [] },
  { name: `reference (leaseMs ${LEASE_MS})`, variant: { leaseMs: LEASE_MS }, caughtBy: [] },
  {
    name: 'acks on receipt: a crash, a closed subscription or a lapsed lease loses the message',
    variant: {
      leaseMs: LEASE_MS,
      broker: () => new AckOnReceiptBroker(),
      breakTransport: ackOnReceipt,
    },
    caughtBy: ['C07', 'C13', 'C20', 'C22', 'C28', 'C30'],
  },
  {
    name: 'no-op ack: ack resolves true, the broker never hears it',
    variant: { breakTransport: noopAck },
    // The message stays in flight (its slot never freed), and the ack answers true for a
    // delivery its connection or subscription gave back.
    caughtBy: ['C03', 'C05', 'C07', 'C13', 'C15', 'C16', 'C17', 'C18', 'C22', 'C23', 'C30'],
  },
  {
    name: 'ignores the retry delay: retry({ delayMs }) redelivers at once',
    variant: { broker: () => new NoDelayBroker() },
    caughtBy: ['C09'],
  },
  {
    name: 'keeps fetching after stop()',
    variant: { breakTransport: keepsFetching('stop') },
    caughtBy: ['C22', 'C23'],
  },
  {
    name: 'keeps fetching after subscription.close()',
    variant: { breakTransport: keepsFetching('close') },
    caughtBy: ['C13', 'C23'],
  },
  {
    name: 'drops buffered publishes on close()',
    variant: { breakTransport: dropsBufferOnClose() },
    caughtBy: ['C25'],
  },
  {
    name: 'resolves a publish before the broker confirmed it',
    variant: { breakTransport: resolvesBeforeConfirm() },
    caughtBy: ['C25'],
  },
  {
    name: 'declares an exact counter and reports attempt 1 on every delivery',
    variant: { breakTransport: stuckAttempt },
    caughtBy: ['C07', 'C08', 'C10'],
  },
  {
    name: "redeliveryCounter 'none' (not broken): raw attempts are a lower bound, consumer attempts exact",
    variant: { breakTransport: noCounter },
    caughtBy: [],
  },
  {
    name: "redeliveryCounter 'none' and handler attempts not counted by the record",
    variant: {
      breakTransport: noCounter,
      createStore: async () => attemptBlindStore(memoryStore()),
    },
    caughtBy: ['C10', 'C11', 'C28', 'C29', 'C30', 'C33'],
  },
];

describe('transport conformance: negative controls', () => {
  const results = new Map<Run, CaseResult[]>();

  beforeAll(async () => {
    const pool = runs.flatMap((run) =>
      collectTransportCases(harness(run.name, run.variant)).map((collected) => ({
        run,
        collected,
      })),
    );
    const outcomes = await runCollectedCases(
      pool.map((p) => p.collected),
      { concurrency: CONCURRENCY },
    );
    for (const [i, { run }] of pool.entries()) {
      const outcome = outcomes[i];
      if (outcome) results.set(run, [...(results.get(run) ?? []), outcome]);
    }
  }, 120_000);

  // A reference must pass every case; a control must fail at least the cases named for it (a
  // loaded machine may add a timing failure to a broken transport, never take one away).
  it.each(runs)('$name: fails $caughtBy', (run) => {
    const outcomes = results.get(run) ?? [];
    expect(outcomes.length).toBeGreaterThan(30);
    const why = describeFailedCases(outcomes);
    if (run.caughtBy.length === 0) expect(failedCaseIds(outcomes), why).toEqual([]);
    else expect(failedCaseIds(outcomes), why).toEqual(expect.arrayContaining(run.caughtBy));
  });
});
