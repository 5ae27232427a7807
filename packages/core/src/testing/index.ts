export { type FaultyStore, faultyStore } from './faultyStore.js';
export { type ManualClock, manualClock } from './manualClock.js';
export { randomSeed, seededRandom } from './seededRandom.js';
