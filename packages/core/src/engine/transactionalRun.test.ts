import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { StoreUnavailableError } from '../errors/store.js';
import { memoryStore } from '../store/memoryStore.js';
import type {
  CompleteRequest,
  FencedRequest,
  StoreTransaction,
  TransactionalStore,
} from '../store/store.js';
import { manualClock } from '../testing/index.js';
import { createIdempotency } from './createIdempotency.js';

/** A journal standing in for a database transaction: writes become visible only on commit. */
interface Journal {
  writes: string[];
}

/**
 * A memory store with the transactional capability: the completion and the journal's writes
 * commit together. `commitFails` makes the next commit reject with that error, nothing written.
 */
function transactionalMemoryStore(options: { maxResultBytes?: number } = {}) {
  const clock = manualClock();
  const store = memoryStore({ clock, ...options });
  const committed: string[] = [];
  const events: string[] = [];
  let commitFails: Error | undefined;
  let openFails: Error | undefined;
  const transactional: TransactionalStore = Object.assign(store, {
    async openTransaction(claim: FencedRequest): Promise<StoreTransaction> {
      if (openFails) throw openFails;
      events.push(`open ${claim.requestId}`);
      const journal: Journal = { writes: [] };
      let ended = false;
      return {
        handle: journal,
        async commit(request: CompleteRequest) {
          if (commitFails) {
            const error = commitFails;
            commitFails = undefined;
            ended = true;
            throw error;
          }
          const outcome = await store.complete(request);
          ended = true;
          if (outcome === 'ok') committed.push(...journal.writes);
          events.push(`commit ${request.requestId} ${outcome}`);
          return outcome;
        },
        async rollback() {
          if (ended) return;
          ended = true;
          events.push(`rollback ${claim.requestId}`);
        },
      };
    },
  });
  return {
    store: transactional,
    clock,
    committed,
    events,
    failNextCommit: (error: Error) => {
      commitFails = error;
    },
    failOpen: (error: Error) => {
      openFails = error;
    },
  };
}

const write = (transaction: unknown, what: string) => (transaction as Journal).writes.push(what);

describe('run() on a transactional store', () => {
  it('hands the handler its transaction and commits the effect with the completion', async () => {
    const { store, committed, events } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's', storeResults: true });
    const outcome = await idem.run('a', (ctx) => {
      write(ctx.transaction, 'ledger a');
      return 'paid';
    });
    expect(outcome).toMatchObject({ status: 'processed', result: 'paid', attempt: 1 });
    expect(committed).toEqual(['ledger a']);
    expect(events).toEqual(['open a', 'commit a ok']);
    expect(await idem.run('a', () => 'again')).toMatchObject({
      status: 'duplicate',
      result: 'paid',
    });
    expect(events).toHaveLength(2);
  });

  it('rolls the effect back and records the failure when the handler throws', async () => {
    const { store, committed, events } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's' });
    await expect(
      idem.run('a', (ctx) => {
        write(ctx.transaction, 'ledger a');
        throw new Error('declined');
      }),
    ).rejects.toThrow('declined');
    expect(committed).toEqual([]);
    expect(events).toEqual(['open a', 'rollback a']);
    expect(await store.inspect({ scope: 's', requestId: 'a' })).toMatchObject({ state: 'FAILED' });
  });

  it('commits nothing when another owner took the record over (lease-lost)', async () => {
    const { store, clock, committed, events } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's', heartbeat: false, leaseMs: 1_000 });
    const outcome = await idem.run('a', async (ctx) => {
      write(ctx.transaction, 'zombie write');
      // Paused past its lease, and another process took the record over meanwhile.
      clock.advance(1_001);
      const takeover = await store.claim({
        scope: 's',
        requestId: 'a',
        leaseMs: 1_000,
        retainMs: 1_000,
      });
      expect(takeover.status).toBe('claimed');
      return 'late';
    });
    expect(outcome).toMatchObject({ status: 'lease-lost', attempt: 1, result: 'late' });
    expect(committed).toEqual([]);
    expect(events).toEqual(['open a', 'commit a lease-lost']);
  });

  it('gives the claim back when the commit outcome is unknown (connection lost)', async () => {
    const { store, committed, failNextCommit } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's' });
    failNextCommit(new StoreUnavailableError('connection lost at COMMIT'));
    await expect(idem.run('a', (ctx) => write(ctx.transaction, 'x'))).rejects.toMatchObject({
      code: ErrorCodes.STORE_UNAVAILABLE,
    });
    expect(committed).toEqual([]);
    expect(await store.inspect({ scope: 's', requestId: 'a' })).toMatchObject({
      state: 'RELEASED',
    });
    // The retry runs as the same attempt, not counted as a failure.
    expect(await idem.run('a', () => 'ok')).toMatchObject({ status: 'processed', attempt: 1 });
  });

  it('records a commit the database refused as the run failing (its writes rolled back)', async () => {
    const { store, committed, failNextCommit } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's' });
    const refusal = Object.assign(new Error('deferred constraint violated'), { code: '23505' });
    failNextCommit(refusal);
    await expect(idem.run('a', (ctx) => write(ctx.transaction, 'x'))).rejects.toBe(refusal);
    expect(committed).toEqual([]);
    const record = await store.inspect({ scope: 's', requestId: 'a' });
    expect(record).toMatchObject({
      state: 'FAILED',
      lastError: { message: 'deferred constraint violated' },
    });
  });

  it('never runs the handler when the transaction cannot be opened, and gives the claim back', async () => {
    const { store, failOpen } = transactionalMemoryStore();
    const idem = createIdempotency({ store, scope: 's' });
    failOpen(new StoreUnavailableError('pool exhausted'));
    let ran = false;
    await expect(
      idem.run('a', () => {
        ran = true;
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE });
    expect(ran).toBe(false);
    expect(await store.inspect({ scope: 's', requestId: 'a' })).toMatchObject({
      state: 'RELEASED',
    });
  });

  it('commits again without the result when the result is over the limit', async () => {
    const { store, committed } = transactionalMemoryStore({ maxResultBytes: 8 });
    const idem = createIdempotency({ store, scope: 's', storeResults: true });
    const outcome = await idem.run('a', (ctx) => {
      write(ctx.transaction, 'big');
      return 'x'.repeat(100);
    });
    expect(outcome).toMatchObject({ status: 'processed', resultOmitted: 'too-large' });
    expect(committed).toEqual(['big']);
    expect(await idem.run('a', () => 'again')).toMatchObject({
      status: 'duplicate',
      resultOmitted: 'too-large',
    });
  });
});
