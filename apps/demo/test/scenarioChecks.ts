import { expect } from 'vitest';
import type { createScenario, RunFigures } from '../src/scenario.js';
import { violations } from '../src/summary.js';

/** What every scenario run must show: each id processed once, nothing lost, no error. */
export function expectCorrect(figures: RunFigures, lateDuplicatesPlanned: number): void {
  expect(violations(figures)).toEqual([]);
  expect(figures.processedTwice).toBe(0);
  expect(figures.lost).toBe(0);
  expect(figures.completed).toBe(figures.uniqueIds - figures.poison);
  expect(figures.deadLettered).toBe(figures.poison);
  expect(figures.lateDuplicates).toBe(lateDuplicatesPlanned);
  expect(figures.duplicatesSkipped).toBeGreaterThanOrEqual(figures.lateDuplicates);
  expect(figures.timedOut).toBe(false);
  expect(figures.errors + figures.leaseLost + figures.storeErrors).toBe(0);
}

/** How many duplicates the plan sends after their id completed. */
export function lateDuplicates(scenario: ReturnType<typeof createScenario>): number {
  return [...scenario.plan.duplicates.values()].filter((kind) => kind === 'after-completion')
    .length;
}
