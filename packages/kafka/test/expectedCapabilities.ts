import type { Capabilities } from '@idemq/core';

/** What every Kafka mode declares alike. */
const COMMON = {
  redeliveryCounter: 'none',
  nativeDelay: 'emulated',
  deadLetter: 'emulated',
  orderingScope: 'partition',
  leaseExtension: false,
  batchAck: 'contiguous-prefix',
  maxHeaders: null,
  maxPayloadBytes: 1_000_000,
  // startFrom 'earliest', the default.
  replayForNewGroup: true,
  releaseCountsAttempt: false,
  consumerGroups: true,
  publishDedup: false,
} as const satisfies Omit<Capabilities, 'nackBlocksKey'>;

/**
 * What the Kafka transport must declare in each mode the conformance files run, written out
 * rather than read from the adapter: C00 checks every connection against it, so a changed
 * declaration fails the suite instead of silently changing what the suite checks.
 */
export const EXPECTED_CAPABILITIES = {
  /** Partitions consumed in order, retries in place: a retried message blocks its partition. */
  inOrderInPlace: { ...COMMON, nackBlocksKey: true },
  /** `partitionConcurrency: 16`: later messages of the partition go on around a retry. */
  concurrentInPlace: { ...COMMON, nackBlocksKey: false },
  /** `retryMode: 'topic'`: retries wait in `<source>.retry`, the partition never blocks. */
  inOrderRetryTopic: { ...COMMON, nackBlocksKey: false },
} as const satisfies Record<string, Capabilities>;
