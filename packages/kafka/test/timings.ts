import type { KafkaTransportOptions } from '../src/index.js';

/**
 * Group timings for tests: the broker's minimum session (6 s) and short heartbeats and fetch
 * waits, so that joins, rebalances and takeovers take about a second, not ten.
 */
export const TEST_TIMINGS = Object.freeze({
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 300,
  rebalanceTimeoutMs: 5_000,
  maxWaitTimeMs: 200,
}) satisfies Partial<KafkaTransportOptions>;
