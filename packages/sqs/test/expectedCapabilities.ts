import type { Capabilities } from '@idemq/core';

/** SQS's visibility limit: the longest delay and the longest lease after a receive. */
const TWELVE_HOURS_MS = 12 * 60 * 60 * 1000;

/** What standard and FIFO queues declare alike. */
const COMMON = {
  redeliveryCounter: 'approximate',
  nativeDelay: { maxMs: TWELVE_HOURS_MS },
  leaseExtension: { maxTotalMs: TWELVE_HOURS_MS },
  batchAck: 'individual',
  maxHeaders: null,
  maxPayloadBytes: 262_144,
  replayForNewGroup: false,
  // ApproximateReceiveCount counts every receive, give-backs included.
  releaseCountsAttempt: true,
  consumerGroups: false,
} as const satisfies Partial<Capabilities>;

/**
 * What the SQS transport must declare for each queue kind the conformance files run, written
 * out rather than read from the adapter: C00 checks every connection against it, so a changed
 * declaration fails the suite instead of silently changing what the suite checks.
 */
export const EXPECTED_CAPABILITIES = {
  /** Standard queues with a RedrivePolicy (`redrive: true`): no order, native dead letters. */
  standardRedrive: {
    ...COMMON,
    deadLetter: 'native',
    orderingScope: 'none',
    nackBlocksKey: false,
    publishDedup: false,
  },
  /** FIFO queues, dead letters sent by the transport: order per group, 5-minute publish dedup. */
  fifo: {
    ...COMMON,
    deadLetter: 'emulated',
    orderingScope: 'group',
    nackBlocksKey: true,
    publishDedup: { windowMs: 5 * 60 * 1000 },
  },
} as const satisfies Record<string, Capabilities>;
