import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger.js';

const ledger = new Ledger(serviceUrls().redis, `idemq-chaos-test:${randomUUID().slice(0, 8)}`);
afterAll(async () => {
  await ledger.drop();
  ledger.close();
});

describe('the ledger on Redis', () => {
  it('refuses a zombie effect, absorbs a replayed one, and finds unclaimed executions', async () => {
    await ledger.recordClaim('a', 1);
    await ledger.beginExecution('a', 1);
    await ledger.recordClaim('a', 2);
    await ledger.beginExecution('a', 2);
    // The first owner comes back after a takeover: its token is lower, its effect refused.
    expect(await ledger.commitEffect('a', 1)).toBe('stale');
    expect(await ledger.commitEffect('a', 2)).toBe('applied');
    // A re-execution after a crash finds the effect already applied.
    await ledger.recordClaim('a', 3);
    await ledger.beginExecution('a', 3);
    expect(await ledger.commitEffect('a', 3)).toBe('replayed');
    await ledger.beginExecution('b', 7);
    await ledger.recordCompletion('a');

    const snapshot = await ledger.snapshot();
    expect(snapshot.executions.get('a')).toBe(3);
    expect(snapshot.effects.get('a')).toBe(2);
    expect(snapshot.replays.get('a')).toBe(1);
    expect(snapshot.completions.get('a')).toBe(1);
    expect(snapshot.counters.staleEffects).toBe(1);
    expect(snapshot.unclaimedExecutions).toBe(1);
  });

  it("keeps each id's trail: how often it was sent round again, and the last time", async () => {
    await ledger.noteTrail('c', 'store-error', 'w1');
    await ledger.noteTrail('c', 'in-progress', 'w2');
    await ledger.noteTrail('c', 'in-progress', 'w3');
    const before = Date.now();
    const trails = await ledger.trails(['c', 'quiet']);
    expect(trails.get('c')?.counts).toEqual({ 'store-error': 1, 'in-progress': 2 });
    expect(trails.get('c')?.last).toMatchObject({ event: 'in-progress', worker: 'w3' });
    expect(trails.get('c')?.last?.at).toBeLessThanOrEqual(before);
    expect(trails.get('quiet')).toEqual({ counts: {}, last: undefined });
  });
});
