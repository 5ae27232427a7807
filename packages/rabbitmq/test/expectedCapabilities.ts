import type { Capabilities } from '@idemq/core';
import type { QueueType } from '../src/index.js';

/**
 * What the RabbitMQ transport must declare, per queue type, written out rather than read from
 * the adapter: C00 checks every connection against it, so a changed declaration fails the suite
 * instead of silently changing what the suite checks.
 */
export const EXPECTED_CAPABILITIES: Readonly<Record<QueueType, Capabilities>> = {
  quorum: {
    redeliveryCounter: 'exact',
    nativeDelay: 'emulated',
    deadLetter: 'emulated',
    orderingScope: 'queue',
    nackBlocksKey: false,
    leaseExtension: false,
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: 16 * 1024 * 1024,
    replayForNewGroup: false,
    releaseCountsAttempt: false,
    consumerGroups: true,
    publishDedup: false,
  },
  classic: {
    // Classic queues count no deliveries: attempts come from the store.
    redeliveryCounter: 'none',
    nativeDelay: 'emulated',
    deadLetter: 'emulated',
    orderingScope: 'queue',
    nackBlocksKey: false,
    leaseExtension: false,
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: 16 * 1024 * 1024,
    replayForNewGroup: false,
    releaseCountsAttempt: false,
    consumerGroups: true,
    publishDedup: false,
  },
};
