import { ErrorCodes } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalescer.js';
import type { ScriptRunner } from './scriptRunner.js';

/** A runner answering every call with `reply`: the coalescer's own checks, no server. */
function answering(reply: unknown): ScriptRunner {
  return { calls: 0, run: async () => reply } as unknown as ScriptRunner;
}

const shared = { id: 'release', values: [] };

function coalescer(reply: unknown) {
  return new Coalescer({
    runner: answering(reply),
    perSlot: false,
    timeoutMs: 1_000,
    maxBatch: 32,
    callsInFlight: 2,
  });
}

describe('Coalescer: a reply of the wrong shape', () => {
  it('fails every caller of the call with a refusal of the store, not of a record', async () => {
    for (const reply of ['OK', [1], [1, 0, 1, 1]]) {
      const lane = coalescer(reply);
      const settled = await Promise.all(
        ['k1', 'k2', 'k3'].map((key) =>
          lane.run('release', key, ['token'], shared).catch((error: unknown) => error),
        ),
      );
      for (const error of settled) {
        expect(error, JSON.stringify(reply)).toMatchObject({
          code: ErrorCodes.STORE_REJECTED,
          affects: 'store',
          retriable: false,
        });
      }
    }
  });

  it('hands each caller its own element, an error element included, for the caller to decode', async () => {
    const lane = coalescer([1, ['error', 'WRONGTYPE Operation'], 0]);
    const replies = await Promise.all(
      ['k1', 'k2', 'k3'].map((key) => lane.run('release', key, ['token'], shared)),
    );
    expect(replies).toEqual([1, ['error', 'WRONGTYPE Operation'], 0]);
  });
});

describe('Coalescer.runBatch', () => {
  it('fails only the keys of a call that failed; the other calls’ keys get their replies', async () => {
    // Two settings: two calls. The runner refuses the call of the second.
    const runner = {
      calls: 0,
      run: async (_script: string, keys: readonly string[], args: readonly unknown[]) => {
        if (args[0] === 'refused') throw new Error('READONLY You can’t write against a replica');
        return keys.map(() => 1);
      },
    } as unknown as ScriptRunner;
    const batch = new Coalescer({
      runner,
      perSlot: false,
      timeoutMs: 1_000,
      maxBatch: 32,
      callsInFlight: 2,
    });
    const answered = { id: 'answered', values: ['answered'] };
    const refused = { id: 'refused', values: ['refused'] };
    const replies = await batch.runBatch('release', [
      { key: 'k1', args: ['t1'], shared: answered },
      { key: 'k2', args: ['t2'], shared: refused },
      { key: 'k3', args: ['t3'], shared: answered },
    ]);
    expect(replies[0]).toBe(1);
    expect(replies[2]).toBe(1);
    expect(replies[1]).toBeInstanceOf(Error);
    expect(replies[1]).toMatchObject({ retriable: true });
    expect(batch.roundTrips).toBe(1);
  });
});
