import type { IncomingMessage } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { type DeliveryHost, type Handout, KafkaDelivery } from './delivery.js';
import type { LaneMessage, PartitionLane } from './partitionWorker.js';

/** A host that records what the delivery asked of it. */
function recordingHost(): DeliveryHost & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    finish: () => void calls.push('finish'),
    giveBack: () => void calls.push('giveBack'),
    retry: async (_, options) => void calls.push(`retry ${options.delayMs ?? 0}`),
    reject: async (_, options) => void calls.push(`reject ${options.reason}`),
    heartbeat: async () => void calls.push('heartbeat'),
  };
}

function delivery(host: DeliveryHost, laneState = 'active', state: Handout['state'] = 'out') {
  const handout: Handout = {
    lane: { state: laneState } as unknown as PartitionLane,
    message: {} as LaneMessage,
    state,
  };
  return new KafkaDelivery(host, handout, {} as IncomingMessage);
}

describe('KafkaDelivery', () => {
  it('settles once: the first verb reaches the subscription, later ones resolve false', async () => {
    const host = recordingHost();
    const d = delivery(host);
    expect(await d.ack()).toBe(true);
    expect(await d.reject({ reason: 'late', code: 'X' })).toBe(false);
    expect(await d.release()).toBe(false);
    expect(d.settled).toBe(true);
    expect(host.calls).toEqual(['finish']);
  });

  it('maps each verb to its subscription call', async () => {
    const host = recordingHost();
    expect(await delivery(host).retry({ delayMs: 50 })).toBe(true);
    expect(await delivery(host).reject({ reason: 'bad', code: 'X' })).toBe(true);
    expect(await delivery(host).release()).toBe(true);
    expect(host.calls).toEqual(['retry 50', 'reject bad', 'giveBack']);
  });

  it('extends the lease with a heartbeat without settling', async () => {
    const host = recordingHost();
    const d = delivery(host);
    expect(await d.extendLease(30_000)).toBe(true);
    expect(d.settled).toBe(false);
    expect(await d.ack()).toBe(true);
    expect(host.calls).toEqual(['heartbeat', 'finish']);
  });

  it('settles nothing once its partition is revoked or the hand-out ended', async () => {
    const host = recordingHost();
    const revoked = delivery(host, 'revoked');
    expect(await revoked.extendLease(30_000)).toBe(false);
    expect(await revoked.ack()).toBe(false);
    expect(await delivery(host, 'active', 'void').release()).toBe(false);
    expect(host.calls).toEqual([]);
  });
});
