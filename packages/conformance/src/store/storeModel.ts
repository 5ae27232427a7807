import type {
  ClaimOutcome,
  ClaimRequest,
  IdempotencyRecord,
  RecordState,
  Store,
  StoredError,
  TransitionOutcome,
} from '@idemq/core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { uniqueName } from '../names.js';
import { sleep } from '../wait.js';

/**
 * What `runStoreModel` needs: a way to make stores and, for a store on a manual clock, to move
 * its time. Any `StoreHarness` is one (it then waits real time).
 */
export interface StoreModelHarness {
  /** Shown in the test title. */
  name: string;
  /** A new store for each run; the model closes it. */
  createStore(): Promise<Store>;
  /**
   * Moves store time forward by `ms` for every store `createStore()` made: for a store on a
   * manual clock. Without it the model waits real time, and reads the time a store answered in
   * as the interval between sending a call and its reply.
   */
  advanceTime?(ms: number): void | Promise<void>;
}

/** How much the model runs. */
export interface StoreModelOptions {
  /** Random command sequences tried. @default 200 with `advanceTime`, 20 without */
  numRuns?: number;
  /** Commands in a sequence, at most. @default 60 with `advanceTime`, 40 without */
  maxCommands?: number;
  /**
   * The unit of every duration: leases are 1–2 units, retention 2–3, TTLs 3–4, and time
   * advances 1–5 units a step. @default 100 with `advanceTime`, 50 without
   */
  unitMs?: number;
  /** The test's timeout. @default 120000 */
  timeoutMs?: number;
}

/**
 * Registers one vitest property test: random interleavings of `claim`, `claimMany`, `complete`,
 * `completeMany`, `fail`, `renew`, `release` and `inspect` by several owners (some holding stale
 * or forged tokens) on two ids, with time passing, checked against a model of the contract (the TSDoc of
 * `Store`). The model predicts every answer and every record from the requests it sent and the
 * time it knows: when a lease, a retention or a TTL it asked for ends; it never takes a store's
 * own `expiresAt` for the truth.
 */
export function runStoreModel(harness: StoreModelHarness, options: StoreModelOptions = {}): void {
  it(
    `store model: ${harness.name} answers as the contract says under random interleavings`,
    () => checkStoreModel(harness, options),
    options.timeoutMs ?? 120_000,
  );
}

/** Runs the model once; rejects with fast-check's report when the store departs from it. */
export async function checkStoreModel(
  harness: StoreModelHarness,
  options: StoreModelOptions = {},
): Promise<void> {
  const manual = harness.advanceTime !== undefined;
  const unitMs = options.unitMs ?? (manual ? 100 : 50);
  const time: ModelTime = manual ? new ManualTime(harness) : new RealTime();
  const durations = durationsOf(unitMs);
  await fc.assert(
    fc.asyncProperty(
      fc.commands(commandsOf(durations), {
        maxCommands: options.maxCommands ?? (manual ? 60 : 40),
        size: 'max',
      }),
      async (commands) => {
        const store = await harness.createStore();
        const model = new Model(uniqueName('model'), time);
        try {
          await fc.asyncModelRun(() => ({ model, real: store }), commands);
        } finally {
          await store.close();
        }
      },
    ),
    // Shrinking re-runs sequences: in real time that costs minutes, so the first failure is reported.
    { numRuns: options.numRuns ?? (manual ? 200 : 20), endOnFailure: !manual },
  );
}

const IDS = ['a', 'b'] as const;
type Id = (typeof IDS)[number];
const WORKERS = [0, 1, 2] as const;

interface Durations {
  settings: Array<{ leaseMs: number; retainMs: number }>;
  completeTtlMs: number;
  failTtlMs: number;
  renewLeaseMs: number;
  advance: { min: number; max: number; unitMs: number };
}

function durationsOf(u: number): Durations {
  return {
    settings: [
      { leaseMs: 2 * u, retainMs: 3 * u },
      { leaseMs: u, retainMs: 2 * u },
    ],
    completeTtlMs: 4 * u,
    failTtlMs: 3 * u,
    renewLeaseMs: 2 * u,
    advance: { min: 1, max: 5, unitMs: u },
  };
}

/** When the store answered: an instant on a manual clock, an interval in real time. */
interface Window {
  lo: number;
  hi: number;
}

/** When something the model asked for ends, as a window of the same clock. */
type Deadline = Window;

interface ModelTime {
  readonly exact: boolean;
  /** Runs one store call and says when the store answered it. */
  call<T>(deadlines: Deadline[], run: () => Promise<T>): Promise<{ value: T; at: Window }>;
  advance(ms: number): Promise<void>;
}

class ManualTime implements ModelTime {
  readonly exact = true;
  private now = 0;
  constructor(private readonly harness: StoreModelHarness) {}
  async call<T>(_deadlines: Deadline[], run: () => Promise<T>) {
    return { value: await run(), at: { lo: this.now, hi: this.now } };
  }
  async advance(ms: number) {
    this.now += ms;
    await this.harness.advanceTime?.(ms);
  }
}

/** Clocks round to ms and a server decides on its own reading: a deadline this close is unsure. */
const REAL_EPSILON_MS = 3;
/** How long a store call may take for its window to stay clear of the deadlines around it. */
const REAL_CALL_BUDGET_MS = 25;

class RealTime implements ModelTime {
  readonly exact = false;
  async call<T>(deadlines: Deadline[], run: () => Promise<T>) {
    // Waits out any deadline the call would straddle, so that its answer is decided.
    for (;;) {
      const now = performance.now();
      const near = deadlines.find(
        (d) => now >= d.lo - REAL_EPSILON_MS - REAL_CALL_BUDGET_MS && now <= d.hi + REAL_EPSILON_MS,
      );
      if (!near) break;
      await sleep(near.hi + REAL_EPSILON_MS + 1 - now);
    }
    const lo = performance.now();
    const value = await run();
    return { value, at: { lo, hi: performance.now() } };
  }
  advance(ms: number) {
    return sleep(ms);
  }
}

interface ModelRecord {
  state: RecordState;
  attempt: number;
  fencingToken: number;
  token?: string;
  fingerprint?: string;
  lastError?: StoredError;
  result?: string;
  completedAt?: Window;
  leaseEnd?: Deadline;
  /** The lease the last claim or renewal gave: the bound of `retryAfterMs`. */
  leaseMs?: number;
  retainMs: number;
  expires: Deadline;
}

const after = (at: Window, ms: number): Deadline => ({ lo: at.lo + ms, hi: at.hi + ms });

/** The contract, as a model: what every answer and every record must be. */
class Model {
  readonly records = new Map<Id, ModelRecord>();
  readonly highestFence = new Map<Id, number>();
  /** The latest token each worker won, per id. */
  readonly held = new Map<string, string>();
  /** Every token ever handed out: stale ones are sent again. */
  readonly tokens: string[] = [];
  /** Store time minus model time, learnt from the first claim (exact time only). */
  private origin: number | undefined;

  constructor(
    readonly scope: string,
    readonly time: ModelTime,
  ) {}

  deadlines(): Deadline[] {
    return [...this.records.values()].flatMap((r) =>
      r.leaseEnd ? [r.expires, r.leaseEnd] : [r.expires],
    );
  }

  /**
   * Whether `deadline` has passed when the store answered at `at`; a run whose answer falls
   * within a clock tick of a deadline is discarded, as it cannot be decided.
   */
  passed(deadline: Deadline, at: Window): boolean {
    const epsilon = this.time.exact ? 0 : REAL_EPSILON_MS;
    if (at.lo >= deadline.hi + epsilon) return true;
    if (at.hi <= deadline.lo - epsilon) return false;
    fc.pre(false);
    return false;
  }

  live(id: Id, at: Window): ModelRecord | undefined {
    const record = this.records.get(id);
    if (record && this.passed(record.expires, at)) {
      this.records.delete(id);
      return undefined;
    }
    return record;
  }

  /** Store time of a model instant, checked where time is exact. */
  expectStoreTime(actual: number | undefined, modelTime: Window, what: string): void {
    if (!this.time.exact) return;
    if (this.origin === undefined && actual !== undefined) this.origin = actual - modelTime.lo;
    expect(actual, what).toBe((this.origin ?? 0) + modelTime.lo);
  }

  /** Checks a claim's answer and applies it. */
  claim(id: Id, request: ClaimRequest, outcome: ClaimOutcome, at: Window, worker: number): void {
    const record = this.live(id, at);
    const what = `claim(${id}, ${request.fingerprint ?? 'no fingerprint'}) → ${JSON.stringify(outcome)}`;
    if (record?.fingerprint && request.fingerprint && record.fingerprint !== request.fingerprint) {
      expect(outcome, what).toEqual({ status: 'key-reuse' });
      return;
    }
    if (record?.state === 'COMPLETED') {
      expect(outcome.status, what).toBe('duplicate');
      if (outcome.status !== 'duplicate') return;
      expect(outcome.result, what).toBe(record.result);
      if (record.completedAt) this.expectStoreTime(outcome.completedAt, record.completedAt, what);
      return;
    }
    if (record?.state === 'IN_PROGRESS' && record.leaseEnd && !this.passed(record.leaseEnd, at)) {
      expect(outcome, what).toMatchObject({ status: 'in-progress', attempt: record.attempt });
      if (outcome.status !== 'in-progress') return;
      expect(outcome.retryAfterMs, what).toBeGreaterThan(0);
      expect(outcome.retryAfterMs, what).toBeLessThanOrEqual(record.leaseMs ?? 0);
      if (this.time.exact) expect(outcome.retryAfterMs, what).toBe(record.leaseEnd.lo - at.lo);
      return;
    }
    const attempt = (record?.attempt ?? 0) + (record?.state === 'RELEASED' ? 0 : 1);
    expect(outcome, what).toMatchObject({ status: 'claimed', attempt });
    if (outcome.status !== 'claimed') return;
    expect(outcome.previousError, what).toEqual(record?.lastError);
    expect(outcome.fencingToken, what).toBeGreaterThan(this.highestFence.get(id) ?? 0);
    this.expectStoreTime(outcome.leaseExpiresAt, after(at, request.leaseMs), what);
    this.highestFence.set(id, outcome.fencingToken);
    this.held.set(`${worker}/${id}`, outcome.token);
    this.tokens.push(outcome.token);
    const fingerprint = request.fingerprint ?? record?.fingerprint;
    this.records.set(id, {
      state: 'IN_PROGRESS',
      attempt,
      fencingToken: outcome.fencingToken,
      token: outcome.token,
      ...(fingerprint === undefined ? {} : { fingerprint }),
      ...(record?.lastError ? { lastError: record.lastError } : {}),
      leaseEnd: after(at, request.leaseMs),
      leaseMs: request.leaseMs,
      retainMs: request.retainMs,
      expires: after(at, request.leaseMs + request.retainMs),
    });
  }

  /** Checks a fenced call's answer and applies it. */
  transition(
    id: Id,
    token: string,
    call: Transition,
    outcome: TransitionOutcome,
    at: Window,
  ): void {
    const record = this.live(id, at);
    const owns = record?.state === 'IN_PROGRESS' && record.token === token;
    expect(outcome, `${call.kind}(${id}) by ${owns ? 'the owner' : 'a stranger'}`).toBe(
      owns ? 'ok' : 'lease-lost',
    );
    if (!owns || !record) return;
    const { token: _token, leaseEnd: _leaseEnd, leaseMs: _leaseMs, ...ended } = record;
    switch (call.kind) {
      case 'complete': {
        const { lastError: _dropped, ...kept } = ended;
        this.records.set(id, {
          ...kept,
          state: 'COMPLETED',
          result: call.result,
          completedAt: at,
          expires: after(at, call.ttlMs),
        });
        return;
      }
      case 'fail':
        this.records.set(id, {
          ...ended,
          state: 'FAILED',
          lastError: call.error,
          expires: after(at, call.ttlMs),
        });
        return;
      case 'renew': {
        const kept = after(at, call.leaseMs + record.retainMs);
        record.leaseEnd = after(at, call.leaseMs);
        record.leaseMs = call.leaseMs;
        // A renewal pushes the expiry out, never in.
        record.expires = {
          lo: Math.max(record.expires.lo, kept.lo),
          hi: Math.max(record.expires.hi, kept.hi),
        };
        return;
      }
      case 'release':
        this.records.set(id, { ...ended, state: 'RELEASED' });
    }
  }

  /** Checks what `inspect` shows. */
  inspected(id: Id, actual: IdempotencyRecord | undefined, at: Window): void {
    const record = this.live(id, at);
    if (!record) {
      expect(actual, `inspect(${id}): the model says it expired or never existed`).toBeUndefined();
      return;
    }
    const what = `inspect(${id})`;
    expect(actual, what).toBeDefined();
    if (!actual) return;
    expect(actual, what).toMatchObject({
      state: record.state,
      attempt: record.attempt,
      fencingToken: record.fencingToken,
    });
    expect(actual.fingerprint, `${what}.fingerprint`).toBe(record.fingerprint);
    expect(actual.lastError, `${what}.lastError`).toEqual(record.lastError);
    expect(actual.result, `${what}.result`).toBe(record.result);
    if (record.leaseEnd)
      this.expectStoreTime(actual.leaseExpiresAt, record.leaseEnd, `${what}.leaseExpiresAt`);
    if (actual.expiresAt !== undefined)
      this.expectStoreTime(actual.expiresAt, record.expires, `${what}.expiresAt`);
  }
}

type Transition =
  | { kind: 'complete'; ttlMs: number; result: string }
  | { kind: 'fail'; ttlMs: number; error: StoredError }
  | { kind: 'renew'; leaseMs: number }
  | { kind: 'release' };

type Payload = 'p' | 'q' | undefined;

interface ClaimSpec {
  worker: number;
  id: Id;
  payload: Payload;
  settings: number;
}

function requestOf(model: Model, spec: ClaimSpec, durations: Durations): ClaimRequest {
  const settings = durations.settings[spec.settings] ?? durations.settings[0];
  return {
    scope: model.scope,
    requestId: spec.id,
    leaseMs: settings?.leaseMs ?? 1,
    retainMs: settings?.retainMs ?? 1,
    ...(spec.payload === undefined ? {} : { fingerprint: spec.payload }),
  };
}

const describeSpec = (s: ClaimSpec) => `w${s.worker}:${s.id}:${s.payload ?? '-'}:${s.settings}`;

class ClaimCommand implements fc.AsyncCommand<Model, Store> {
  constructor(
    readonly spec: ClaimSpec,
    readonly durations: Durations,
  ) {}
  check = () => true;
  async run(model: Model, store: Store) {
    const request = requestOf(model, this.spec, this.durations);
    const { value, at } = await model.time.call(model.deadlines(), () => store.claim(request));
    model.claim(this.spec.id, request, value, at, this.spec.worker);
  }
  toString = () => `claim(${describeSpec(this.spec)})`;
}

class ClaimManyCommand implements fc.AsyncCommand<Model, Store> {
  constructor(
    readonly specs: ClaimSpec[],
    readonly durations: Durations,
  ) {}
  check = () => true;
  async run(model: Model, store: Store) {
    const requests = this.specs.map((spec) => requestOf(model, spec, this.durations));
    const { value, at } = await model.time.call(model.deadlines(), () => store.claimMany(requests));
    expect(value).toHaveLength(requests.length);
    this.specs.forEach((spec, i) => {
      const request = requests[i];
      const outcome = value[i];
      if (request && outcome) model.claim(spec.id, request, outcome, at, spec.worker);
    });
  }
  toString = () => `claimMany(${this.specs.map(describeSpec).join(', ')})`;
}

/** Which token a fenced call sends: the worker's own, a stale one, or a forged one. */
type TokenPick = { kind: 'own' } | { kind: 'stale'; index: number } | { kind: 'forged' };

function tokenOf(model: Model, worker: number, id: Id, pick: TokenPick): string | undefined {
  switch (pick.kind) {
    case 'own':
      return model.held.get(`${worker}/${id}`);
    case 'stale':
      return model.tokens[pick.index % Math.max(1, model.tokens.length)];
    case 'forged':
      return 'forged-token';
  }
}

const describePick = (pick: TokenPick) =>
  pick.kind === 'stale' ? `stale#${pick.index}` : pick.kind;

class TransitionCommand implements fc.AsyncCommand<Model, Store> {
  constructor(
    readonly worker: number,
    readonly id: Id,
    readonly call: Transition,
    readonly pick: TokenPick,
  ) {}
  check = () => true;
  async run(model: Model, store: Store) {
    const token = tokenOf(model, this.worker, this.id, this.pick);
    if (token === undefined) return;
    const fenced = { scope: model.scope, requestId: this.id, token };
    const call = this.call;
    const { value, at } = await model.time.call(model.deadlines(), () => {
      switch (call.kind) {
        case 'complete':
          return store.complete({ ...fenced, ttlMs: call.ttlMs, result: call.result });
        case 'fail':
          return store.fail({ ...fenced, ttlMs: call.ttlMs, error: call.error });
        case 'renew':
          return store.renew({ ...fenced, leaseMs: call.leaseMs });
        case 'release':
          return store.release(fenced);
      }
    });
    model.transition(this.id, token, call, value, at);
  }
  toString = () => `${this.call.kind}(w${this.worker}, ${this.id}, ${describePick(this.pick)})`;
}

interface CompletionSpec {
  worker: number;
  id: Id;
  pick: TokenPick;
  result: string;
}

class CompleteManyCommand implements fc.AsyncCommand<Model, Store> {
  constructor(
    readonly specs: CompletionSpec[],
    readonly ttlMs: number,
  ) {}
  check = () => true;
  async run(model: Model, store: Store) {
    const requests = this.specs.flatMap((spec) => {
      const token = tokenOf(model, spec.worker, spec.id, spec.pick);
      return token === undefined ? [] : [{ spec, token }];
    });
    const { value, at } = await model.time.call(model.deadlines(), () =>
      store.completeMany(
        requests.map(({ spec, token }) => ({
          scope: model.scope,
          requestId: spec.id,
          token,
          ttlMs: this.ttlMs,
          result: spec.result,
        })),
      ),
    );
    expect(value).toHaveLength(requests.length);
    // Atomic per record, in request order: each as the single completion at that point.
    requests.forEach(({ spec, token }, i) => {
      const settled = value[i];
      expect(settled?.status, `completeMany #${i} (${spec.id})`).toBe('fulfilled');
      if (settled?.status !== 'fulfilled') return;
      const call: Transition = { kind: 'complete', ttlMs: this.ttlMs, result: spec.result };
      model.transition(spec.id, token, call, settled.value, at);
    });
  }
  toString = () =>
    `completeMany(${this.specs.map((s) => `w${s.worker}:${s.id}:${describePick(s.pick)}`).join(', ')})`;
}

class InspectCommand implements fc.AsyncCommand<Model, Store> {
  constructor(readonly id: Id) {}
  check = () => true;
  async run(model: Model, store: Store) {
    const { value, at } = await model.time.call(model.deadlines(), () =>
      store.inspect({ scope: model.scope, requestId: this.id }),
    );
    model.inspected(this.id, value, at);
  }
  toString = () => `inspect(${this.id})`;
}

class AdvanceCommand implements fc.AsyncCommand<Model, Store> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(model: Model) {
    await model.time.advance(this.ms);
  }
  toString = () => `advance(${this.ms})`;
}

function commandsOf(durations: Durations) {
  const worker = fc.constantFrom(...WORKERS);
  const id = fc.constantFrom(...IDS);
  const claimSpec = fc.record({
    worker,
    id,
    payload: fc.constantFrom<Payload>('p', 'p', 'p', 'q', undefined),
    settings: fc.nat(durations.settings.length - 1),
  });
  const transition = fc.oneof(
    fc.constantFrom<Transition>(
      { kind: 'complete', ttlMs: durations.completeTtlMs, result: 'r1' },
      { kind: 'complete', ttlMs: durations.completeTtlMs, result: 'r2' },
      { kind: 'fail', ttlMs: durations.failTtlMs, error: { name: 'E', message: 'boom' } },
      {
        kind: 'fail',
        ttlMs: durations.failTtlMs,
        error: { name: 'E', message: 'again', code: 'X' },
      },
      { kind: 'renew', leaseMs: durations.renewLeaseMs },
      { kind: 'release' },
    ),
  );
  const pick = fc.oneof(
    { weight: 6, arbitrary: fc.constant<TokenPick>({ kind: 'own' }) },
    { weight: 3, arbitrary: fc.nat(30).map((index): TokenPick => ({ kind: 'stale', index })) },
    { weight: 1, arbitrary: fc.constant<TokenPick>({ kind: 'forged' }) },
  );
  const { advance } = durations;
  return [
    claimSpec.map((spec) => new ClaimCommand(spec, durations)),
    fc
      .array(claimSpec, { minLength: 1, maxLength: 4 })
      .map((specs) => new ClaimManyCommand(specs, durations)),
    fc.tuple(worker, id, transition, pick).map(([w, i, t, p]) => new TransitionCommand(w, i, t, p)),
    fc
      .array(fc.record({ worker, id, pick, result: fc.constantFrom('r1', 'r2') }), {
        minLength: 1,
        maxLength: 4,
      })
      .map((specs) => new CompleteManyCommand(specs, durations.completeTtlMs)),
    id.map((i) => new InspectCommand(i)),
    fc
      .integer({ min: advance.min, max: advance.max })
      .map((n) => new AdvanceCommand(n * advance.unitMs)),
  ];
}
