import { memoryStore, type Store } from '@idemq/core';
import { manualClock } from '@idemq/core/testing';
import { describe, expect, it } from 'vitest';
import { checkStoreModel, runStoreModel, type StoreModelHarness } from '../src/index.js';
import { type Flaws, mapStore } from './controls/mapStore.js';

/** Stores on one manual clock, moved by the model instead of sleeping. */
function manualHarness(
  name: string,
  create: (clock: ReturnType<typeof manualClock>) => Store,
): StoreModelHarness {
  const clock = manualClock();
  return {
    name,
    createStore: async () => create(clock),
    advanceTime: (ms) => clock.advance(ms),
  };
}

runStoreModel(manualHarness('memoryStore', (clock) => memoryStore({ clock })));

// Negative controls: the model must catch a broken store, or it proves nothing.
describe('store model negative controls', () => {
  const flawed = (flaws: Flaws) =>
    manualHarness(Object.keys(flaws).join(), (clock) => mapStore({ clock, flaws }));

  it('passes the control store without flaws', async () => {
    await checkStoreModel(manualHarness('no flaw', (clock) => mapStore({ clock })));
  });

  const controls: Array<[string, Flaws]> = [
    ['ignores retainMs', { ignoresRetain: true }],
    ['never expires a FAILED record', { failedNeverExpires: true }],
    ['ignores the owner token', { ignoresToken: true }],
    ['restarts the fencing token when a record expires', { fenceResetsOnExpiry: true }],
    ['refuses the completion of a lapsed owner nobody took over', { refusesLapsedOwner: true }],
    [
      'gives every claim of a batch the first request’s settings',
      { batchTakesFirstSettings: true },
    ],
    ['pushes the expiry out on every claim', { slidingExpiry: true }],
    ['answers in-progress with a constant retryAfterMs', { constantRetryAfter: true }],
  ];
  for (const [broken, flaws] of controls) {
    it(`catches a store that ${broken}`, async () => {
      await expect(checkStoreModel(flawed(flaws), { numRuns: 1_000 })).rejects.toThrow(
        /Property failed/,
      );
    });
  }
});

// The same model in real time (no advanceTime), as it runs against Redis: its time windows must
// pass a correct store. The flaws are proven caught on the manual clock above: in real time a
// search of 50 runs missed a FAILED record kept forever once in about ten CI runs.
describe('store model in real time', () => {
  // Real sleeps: a run takes about a second.
  const TIMEOUT_MS = 60_000;

  it(
    'passes core’s memoryStore',
    async () => {
      const harness = { name: 'memoryStore', createStore: async () => memoryStore() };
      await checkStoreModel(harness, { numRuns: 5 });
    },
    TIMEOUT_MS,
  );
});
