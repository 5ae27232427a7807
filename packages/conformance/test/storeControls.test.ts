import { describe, expect, it } from 'vitest';
import {
  collectStoreCases,
  describeFailedCases,
  failedCaseIds,
  runCollectedCases,
} from '../src/index.js';
import { mapStore } from './controls/mapStore.js';
import { controlHarness, referenceHarness, storeControls } from './controls/storeControls.js';

/*
 * Negative controls of the store suite: a checker is trusted only when broken stores fail it.
 * The runner is proven first (the reference store and the flawless control store pass every
 * case), then each flaw must make the cases named for it fail.
 */

const CONCURRENCY = 32;

describe('store conformance negative controls', () => {
  it('the reference memoryStore passes every case', async () => {
    const results = await runCollectedCases(collectStoreCases(referenceHarness()), {
      concurrency: CONCURRENCY,
    });
    expect(results.length).toBeGreaterThanOrEqual(19);
    expect(failedCaseIds(results), describeFailedCases(results)).toEqual([]);
  });

  it('the control store without flaws passes every case, as two instances on one backend too', async () => {
    const harness = controlHarness('no flaw', (backend) => mapStore({ backend }));
    const cases = collectStoreCases(harness);
    expect(cases.map((c) => c.id)).toContain('S19');
    const results = await runCollectedCases(cases, { concurrency: CONCURRENCY });
    expect(failedCaseIds(results), describeFailedCases(results)).toEqual([]);
  });

  for (const control of storeControls()) {
    it(`catches a store that ${control.broken}`, async () => {
      const results = await runCollectedCases(collectStoreCases(control.harness), {
        concurrency: CONCURRENCY,
      });
      expect(failedCaseIds(results)).toEqual(expect.arrayContaining(control.caughtBy));
    });
  }
});
