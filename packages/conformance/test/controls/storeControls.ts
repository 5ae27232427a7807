import { memoryStore, type Store } from '@idemq/core';
import type { StoreHarness } from '../../src/index.js';
import { type Flaws, mapStore, newBackend } from './mapStore.js';

/** Short leases keep the controls fast; in-process stores need little slack. */
export const CONTROL_TIMING = { shortMs: 100, slackMs: 50 };

/** A harness whose stores are instances on one backend, made by `create`. */
export function controlHarness(
  name: string,
  create: (backend: ReturnType<typeof newBackend>) => Store,
): StoreHarness {
  const backend = newBackend();
  return {
    name,
    createStore: async () => create(backend),
    sharedBackend: true,
    timing: CONTROL_TIMING,
  };
}

/** The reference: core's memoryStore, every instance one view of it (see memory.conformance). */
export const referenceHarness = (): StoreHarness => ({
  name: 'memoryStore',
  createStore: async () => memoryStore(),
  timing: CONTROL_TIMING,
});

export interface StoreControl {
  /** What is broken, as a test title: "catches a store that …". */
  broken: string;
  harness: StoreHarness;
  /** The cases expected to fail against it (the conformance README's table lists them). */
  caughtBy: string[];
}

const flawed = (flaws: Flaws) => (backend: ReturnType<typeof newBackend>) =>
  mapStore({ backend, flaws });

export const storeControls = (): StoreControl[] => [
  {
    broken: 'ignores retainMs (an abandoned IN_PROGRESS record is kept forever)',
    harness: controlHarness('ignores retainMs', flawed({ ignoresRetain: true })),
    caughtBy: ['S17', 'S21'],
  },
  {
    broken: 'never expires a FAILED record',
    harness: controlHarness('FAILED forever', flawed({ failedNeverExpires: true })),
    caughtBy: ['S18'],
  },
  {
    broken: 'ignores the owner token',
    harness: controlHarness('any token', flawed({ ignoresToken: true })),
    caughtBy: ['S02', 'S03', 'S17', 'S19', 'S21'],
  },
  {
    broken: 'claims check-then-set (racing claims all win)',
    harness: controlHarness('check-then-set', flawed({ checkThenSet: true })),
    caughtBy: ['S01', 'S14', 'S19'],
  },
  {
    broken: 'restarts the fencing token when a record expires',
    harness: controlHarness('fence per record', flawed({ fenceResetsOnExpiry: true })),
    caughtBy: ['S06', 'S17', 'S18', 'S19', 'S21'],
  },
  {
    broken: 'issues fencing tokens from a counter per instance',
    harness: controlHarness('counter per instance', (backend) =>
      mapStore({ backend, counter: { value: 0 } }),
    ),
    caughtBy: ['S19'],
  },
  {
    broken: 'refuses the completion of an owner whose lease lapsed, nobody having taken over',
    harness: controlHarness('refuses lapsed owner', flawed({ refusesLapsedOwner: true })),
    caughtBy: ['S12', 'S20'],
  },
  {
    broken: 'gives every claim of a batch the first request’s lease and retainMs',
    harness: controlHarness('batch settings', flawed({ batchTakesFirstSettings: true })),
    caughtBy: ['S21'],
  },
  {
    broken: 'pushes a record’s expiry out on every claim, whatever it answers',
    harness: controlHarness('sliding expiry', flawed({ slidingExpiry: true })),
    caughtBy: ['S06', 'S07', 'S09', 'S20'],
  },
  {
    broken: 'answers in-progress with a constant retryAfterMs, not the time left on the lease',
    harness: controlHarness('constant retryAfterMs', flawed({ constantRetryAfter: true })),
    caughtBy: ['S01', 'S03', 'S09'],
  },
  {
    broken: 'rejects a whole completeMany when one result is over the limit',
    harness: controlHarness(
      'all-or-nothing completeMany',
      flawed({ batchCompletionAllOrNothing: true }),
    ),
    caughtBy: ['S23'],
  },
  {
    broken: 'answers completeMany in the order of its per-settings calls, not in request order',
    harness: controlHarness('completeMany by call', flawed({ batchCompletionsByCall: true })),
    caughtBy: ['S22'],
  },
];
