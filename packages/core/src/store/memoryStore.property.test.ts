import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../testing/manualClock.js';
import { memoryStore } from './memoryStore.js';
import type { IdempotencyRecord, Store } from './store.js';

/*
 * Model-based test of the record state machine: random interleavings of claims, completions,
 * failures, renewals, releases and the passing of store time, from several owners, some of
 * them holding stale tokens. After every step the store's answers are checked against the
 * invariants rather than against a copy of its code:
 *   - at most one live owner: a fenced call succeeds only for the claim that owns the record;
 *   - a stale token never changes a record (reply `lease-lost`, record unchanged);
 *   - COMPLETED is terminal until its TTL;
 *   - attempts never decrease while the record exists; fencing tokens only grow.
 */

const SCOPE = 'model';
const IDS = ['a', 'b'] as const;
const WORKERS = [0, 1, 2] as const;
const LEASE_MS = 100;
const TTL_MS = 400;
const RETAIN_MS = 300;

type Id = (typeof IDS)[number];
interface HeldClaim {
  token: string;
  fencingToken: number;
}

interface Real {
  store: Store;
  clock: ReturnType<typeof manualClock>;
}

interface Model {
  /** Latest claim each worker won, per id; older ones are kept as stale. */
  held: Map<string, HeldClaim>;
  stale: HeldClaim[];
  highestFence: Map<Id, number>;
}

const inspect = (real: Real, id: Id) => real.store.inspect({ scope: SCOPE, requestId: id });

/** What a record must look like when a step did not (or must not) change it. */
function expectUnchanged(
  before: IdempotencyRecord | undefined,
  after: IdempotencyRecord | undefined,
) {
  expect(after).toEqual(before);
}

class ClaimCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly worker: number,
    readonly id: Id,
    readonly payload: 'p' | 'q',
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const now = real.clock.now();
    const before = await inspect(real, this.id);
    const outcome = await real.store.claim({
      scope: SCOPE,
      requestId: this.id,
      leaseMs: LEASE_MS,
      retainMs: RETAIN_MS,
      fingerprint: this.payload,
    });
    const after = await inspect(real, this.id);
    if (outcome.status !== 'claimed') expectUnchanged(before, after);
    switch (outcome.status) {
      case 'key-reuse':
        expect(before?.fingerprint).toBeDefined();
        expect(before?.fingerprint).not.toBe(this.payload);
        return;
      case 'duplicate':
        expect(before?.state).toBe('COMPLETED');
        return;
      case 'in-progress':
        expect(before?.state).toBe('IN_PROGRESS');
        expect(before?.leaseExpiresAt ?? 0).toBeGreaterThan(now);
        expect(outcome.retryAfterMs).toBe((before?.leaseExpiresAt ?? 0) - now);
        return;
      case 'claimed': {
        // Only a claimable record can be claimed: this is "at most one live owner".
        const claimable =
          before === undefined ||
          before.state === 'FAILED' ||
          before.state === 'RELEASED' ||
          (before.state === 'IN_PROGRESS' && (before.leaseExpiresAt ?? 0) <= now);
        expect(claimable).toBe(true);
        const expectedAttempt = (before?.attempt ?? 0) + (before?.state === 'RELEASED' ? 0 : 1);
        expect(outcome.attempt).toBe(expectedAttempt);
        expect(outcome.fencingToken).toBeGreaterThan(model.highestFence.get(this.id) ?? 0);
        expect(after).toMatchObject({
          state: 'IN_PROGRESS',
          attempt: expectedAttempt,
          fencingToken: outcome.fencingToken,
          leaseExpiresAt: now + LEASE_MS,
        });
        model.highestFence.set(this.id, outcome.fencingToken);
        const key = `${this.worker}/${this.id}`;
        const previous = model.held.get(key);
        if (previous) model.stale.push(previous);
        model.held.set(key, { token: outcome.token, fencingToken: outcome.fencingToken });
      }
    }
  }
  toString = () => `claim(w${this.worker}, ${this.id}, ${this.payload})`;
}

type Transition = 'complete' | 'fail' | 'renew' | 'release';

class TransitionCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly worker: number,
    readonly id: Id,
    readonly transition: Transition,
    readonly staleIndex: number | null,
  ) {}
  check = () => true;
  private claim(model: Model): HeldClaim | undefined {
    if (this.staleIndex !== null && model.stale.length > 0) {
      return model.stale[this.staleIndex % model.stale.length];
    }
    return model.held.get(`${this.worker}/${this.id}`);
  }
  async run(model: Model, real: Real) {
    const held = this.claim(model);
    if (!held) return;
    const now = real.clock.now();
    const before = await inspect(real, this.id);
    const fenced = { scope: SCOPE, requestId: this.id, token: held.token };
    const outcome = await this.send(real.store, fenced);
    const after = await inspect(real, this.id);
    const owns = before?.state === 'IN_PROGRESS' && before.fencingToken === held.fencingToken;
    if (!owns) {
      expect(outcome).toBe('lease-lost');
      expectUnchanged(before, after);
      return;
    }
    expect(outcome).toBe('ok');
    const kept = { attempt: before.attempt, fencingToken: before.fencingToken };
    switch (this.transition) {
      case 'complete':
        expect(after).toMatchObject({
          state: 'COMPLETED',
          ...kept,
          result: `r${held.fencingToken}`,
        });
        expect(after?.expiresAt).toBe(now + TTL_MS);
        return;
      case 'fail':
        expect(after).toMatchObject({ state: 'FAILED', ...kept, lastError: { name: 'E' } });
        return;
      case 'renew':
        expect(after).toMatchObject({
          state: 'IN_PROGRESS',
          ...kept,
          leaseExpiresAt: now + LEASE_MS,
        });
        return;
      case 'release':
        expect(after).toMatchObject({ state: 'RELEASED', ...kept });
    }
  }
  private send(store: Store, fenced: { scope: string; requestId: string; token: string }) {
    switch (this.transition) {
      case 'complete':
        return store.complete({ ...fenced, ttlMs: TTL_MS, result: `r${this.claimFence(fenced)}` });
      case 'fail':
        return store.fail({ ...fenced, ttlMs: TTL_MS, error: { name: 'E', message: 'boom' } });
      case 'renew':
        return store.renew({ ...fenced, leaseMs: LEASE_MS });
      case 'release':
        return store.release(fenced);
    }
  }
  private claimFence(fenced: { token: string }) {
    return Number(fenced.token.split('.')[0]);
  }
  toString = () =>
    `${this.transition}(w${this.worker}, ${this.id}${this.staleIndex === null ? '' : `, stale#${this.staleIndex}`})`;
}

/** Store time passes; COMPLETED records stay as they were until their TTL. */
class AdvanceCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_model: Model, real: Real) {
    const befores = await Promise.all(IDS.map((id) => inspect(real, id)));
    real.clock.advance(this.ms);
    const now = real.clock.now();
    for (const [index, id] of IDS.entries()) {
      const before = befores[index];
      const after = await inspect(real, id);
      if (before && (before.expiresAt ?? Number.POSITIVE_INFINITY) <= now) {
        expect(after).toBeUndefined();
      } else {
        // Time alone changes no record: expiry of a lease is decided at the next claim.
        expectUnchanged(before, after);
      }
    }
  }
  toString = () => `advance(${this.ms})`;
}

const worker = fc.constantFrom(...WORKERS);
const id = fc.constantFrom(...IDS);
const commands = [
  fc
    .tuple(worker, id, fc.constantFrom<'p' | 'q'>('p', 'p', 'p', 'q'))
    .map(([w, i, p]) => new ClaimCommand(w, i, p)),
  fc
    .tuple(
      worker,
      id,
      fc.constantFrom<Transition>('complete', 'fail', 'renew', 'release'),
      fc.option(fc.nat(20), { freq: 4 }),
    )
    .map(([w, i, t, stale]) => new TransitionCommand(w, i, t, stale)),
  fc.integer({ min: 1, max: 250 }).map((ms) => new AdvanceCommand(ms)),
];

function checkModel(makeStore: (clock: ReturnType<typeof manualClock>) => Store, numRuns: number) {
  return fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 80 }), async (cmds) => {
      const clock = manualClock();
      const store = makeStore(clock);
      const model: Model = { held: new Map(), stale: [], highestFence: new Map() };
      try {
        await fc.asyncModelRun(() => ({ model, real: { store, clock } }), cmds);
      } finally {
        await store.close();
      }
    }),
    { numRuns },
  );
}

describe('memory store state machine (model-based)', () => {
  it('keeps its invariants under random interleavings of several owners', async () => {
    await checkModel((clock) => memoryStore({ clock, maxResultBytes: 1024 }), 300);
  });

  // Negative controls: the checker must catch a broken store, or it proves nothing.
  it('catches a store that reports a refused completion as done (unfenced reply)', async () => {
    const unfenced = (clock: ReturnType<typeof manualClock>): Store => {
      const inner = memoryStore({ clock });
      return {
        ...inner,
        complete: async (request) => {
          await inner.complete(request);
          return 'ok';
        },
      };
    };
    await expect(checkModel(unfenced, 3000)).rejects.toThrow(/Property failed/);
  });

  it('catches a store that lets a second owner claim a live lease', async () => {
    const doubleOwner = (clock: ReturnType<typeof manualClock>): Store => {
      const inner = memoryStore({ clock });
      return {
        ...inner,
        claim: async (request) => {
          const outcome = await inner.claim(request);
          if (outcome.status !== 'in-progress') return outcome;
          return {
            status: 'claimed',
            token: 'forged',
            fencingToken: Number.MAX_SAFE_INTEGER,
            attempt: outcome.attempt + 1,
            leaseExpiresAt: clock.now() + request.leaseMs,
          };
        },
      };
    };
    await expect(checkModel(doubleOwner, 3000)).rejects.toThrow(/Property failed/);
  });
});
