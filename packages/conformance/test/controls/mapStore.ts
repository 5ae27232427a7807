import { randomUUID } from 'node:crypto';
import {
  type ClaimOutcome,
  type ClaimRequest,
  type Clock,
  type CompleteRequest,
  DEFAULT_MAX_RESULT_BYTES,
  type IdempotencyRecord,
  monotonicClock,
  type RecordId,
  RecordStates,
  type SettledTransition,
  type Store,
  StoreClosedError,
  type TransitionOutcome,
} from '@idemq/core';
import { assertResultFits, settle } from '@idemq/core/adapter';

/**
 * One way to break the store contract each: the negative controls switch one on and check that
 * the conformance cases (and the model) notice.
 */
export interface Flaws {
  /** `claim` ignores `retainMs`: an abandoned IN_PROGRESS record is kept forever. */
  ignoresRetain?: boolean;
  /** `fail` ignores `ttlMs`: a FAILED record is kept forever. */
  failedNeverExpires?: boolean;
  /** Fenced calls accept any token while the record is IN_PROGRESS. */
  ignoresToken?: boolean;
  /** `claim` reads, awaits, then writes: racing claims all win. */
  checkThenSet?: boolean;
  /** The fencing token counts per record and restarts when the record expires. */
  fenceResetsOnExpiry?: boolean;
  /** `complete` is refused once the owner's own lease lapsed, though nobody took over. */
  refusesLapsedOwner?: boolean;
  /** `claimMany` gives every request of a batch the first request's lease and retainMs. */
  batchTakesFirstSettings?: boolean;
  /** Every claim, whatever it answers, pushes the record's expiry out by lease + retainMs. */
  slidingExpiry?: boolean;
  /** `in-progress` answers a fixed `retryAfterMs` (1 s) instead of the time left on the lease. */
  constantRetryAfter?: boolean;
  /** `completeMany` rejects as a whole, writing nothing, when one result is over the limit. */
  batchCompletionAllOrNothing?: boolean;
  /**
   * `completeMany` answers in the order of its per-settings calls (requests grouped by what they
   * store and their TTL), not in request order.
   */
  batchCompletionsByCall?: boolean;
}

/** What a store with the `constantRetryAfter` flaw answers, as peers hard-code `Retry-After: 1`. */
const CONSTANT_RETRY_AFTER_MS = 1_000;

interface Entry extends IdempotencyRecord {
  token?: string;
  retainMs: number;
}

/** What instances share, as processes share one server. */
export interface Backend {
  entries: Map<string, Entry>;
  counter: { value: number };
}

export const newBackend = (): Backend => ({ entries: new Map(), counter: { value: 0 } });

export interface MapStoreOptions {
  backend?: Backend;
  /** The fencing token counter; the backend's unless given (a per-instance counter is a flaw). */
  counter?: { value: number };
  clock?: Clock;
  flaws?: Flaws;
}

const FOREVER_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * A small store over a Map, written for the negative controls: without flaws it keeps the whole
 * contract (the controls test proves it passes every case), so a case that fails with one flaw
 * on fails because of that flaw.
 */
export function mapStore(options: MapStoreOptions = {}): Store {
  const { entries, counter: sharedCounter } = options.backend ?? newBackend();
  const counter = options.counter ?? sharedCounter;
  const clock = options.clock ?? monotonicClock;
  const flaws = options.flaws ?? {};
  let closed = false;

  const keyOf = (id: RecordId) => JSON.stringify([id.scope, id.requestId]);
  function live(id: RecordId, now: number): Entry | undefined {
    if (closed) throw new StoreClosedError();
    const entry = entries.get(keyOf(id));
    if (entry && (entry.expiresAt ?? Number.POSITIVE_INFINITY) <= now) {
      entries.delete(keyOf(id));
      return undefined;
    }
    return entry;
  }

  function decide(
    request: ClaimRequest,
    entry: Entry | undefined,
    now: number,
  ): ClaimOutcome | undefined {
    if (flaws.slidingExpiry && entry) {
      entry.expiresAt = Math.max(entry.expiresAt ?? 0, now + request.leaseMs + request.retainMs);
    }
    if (entry?.fingerprint && request.fingerprint && entry.fingerprint !== request.fingerprint) {
      return { status: 'key-reuse' };
    }
    if (entry?.state === RecordStates.COMPLETED) {
      return {
        status: 'duplicate',
        completedAt: entry.completedAt ?? now,
        ...(entry.result === undefined ? {} : { result: entry.result }),
        ...(entry.resultOmitted === undefined ? {} : { resultOmitted: entry.resultOmitted }),
      };
    }
    const leaseExpiresAt = entry?.leaseExpiresAt ?? 0;
    if (entry?.state === RecordStates.IN_PROGRESS && leaseExpiresAt > now) {
      const retryAfterMs = flaws.constantRetryAfter
        ? CONSTANT_RETRY_AFTER_MS
        : leaseExpiresAt - now;
      return { status: 'in-progress', retryAfterMs, attempt: entry.attempt };
    }
    return undefined;
  }

  function take(request: ClaimRequest, entry: Entry | undefined, now: number): ClaimOutcome {
    counter.value += 1;
    const fencingToken = flaws.fenceResetsOnExpiry ? (entry?.fencingToken ?? 0) + 1 : counter.value;
    const token = randomUUID();
    const leaseExpiresAt = now + request.leaseMs;
    const retainMs = flaws.ignoresRetain ? FOREVER_MS : request.retainMs;
    const claimed: Entry = {
      scope: request.scope,
      requestId: request.requestId,
      state: RecordStates.IN_PROGRESS,
      attempt: (entry?.attempt ?? 0) + (entry?.state === RecordStates.RELEASED ? 0 : 1),
      fencingToken,
      token,
      leaseExpiresAt,
      expiresAt: leaseExpiresAt + retainMs,
      retainMs,
    };
    const fingerprint = request.fingerprint ?? entry?.fingerprint;
    if (fingerprint !== undefined) claimed.fingerprint = fingerprint;
    if (entry?.lastError) claimed.lastError = entry.lastError;
    entries.set(keyOf(request), claimed);
    return {
      status: 'claimed',
      token,
      fencingToken,
      attempt: claimed.attempt,
      leaseExpiresAt,
      ...(entry?.lastError ? { previousError: entry.lastError } : {}),
    };
  }

  function claimNow(request: ClaimRequest): ClaimOutcome {
    const now = clock.now();
    const entry = live(request, now);
    return decide(request, entry, now) ?? take(request, entry, now);
  }

  async function claim(request: ClaimRequest): Promise<ClaimOutcome> {
    if (!flaws.checkThenSet) return claimNow(request);
    const entry = live(request, clock.now());
    const answer = decide(request, entry, clock.now());
    if (answer) return answer;
    // The flaw: another claim may run here, and both write.
    await new Promise((resolve) => setImmediate(resolve));
    return take(request, entry, clock.now());
  }

  /** The entry when `token` owns it now, else undefined. */
  function owned(request: RecordId & { token: string }, now: number): Entry | undefined {
    const entry = live(request, now);
    if (entry?.state !== RecordStates.IN_PROGRESS) return undefined;
    return flaws.ignoresToken || entry.token === request.token ? entry : undefined;
  }

  function end(entry: Entry, fields: Partial<Entry>): TransitionOutcome {
    const { token: _token, leaseExpiresAt: _lease, ...rest } = entry;
    entries.set(keyOf(entry), { ...rest, ...fields });
    return 'ok';
  }

  const store: Store = {
    claim,
    async claimMany(requests) {
      if (closed) throw new StoreClosedError();
      const [first] = requests;
      const outcomes: ClaimOutcome[] = [];
      for (const request of requests) {
        const settings = flaws.batchTakesFirstSettings && first ? first : request;
        outcomes.push(
          await claim({ ...request, leaseMs: settings.leaseMs, retainMs: settings.retainMs }),
        );
      }
      return outcomes;
    },
    async complete(request) {
      assertResultFits(request.result, DEFAULT_MAX_RESULT_BYTES);
      const now = clock.now();
      const entry = owned(request, now);
      if (!entry) return 'lease-lost';
      if (flaws.refusesLapsedOwner && (entry.leaseExpiresAt ?? 0) <= now) return 'lease-lost';
      // A completion drops the remembered error.
      const { lastError: _dropped, ...kept } = entry;
      return end(kept, {
        state: RecordStates.COMPLETED,
        completedAt: now,
        expiresAt: now + request.ttlMs,
        ...(request.result !== undefined
          ? { result: request.result }
          : request.resultOmitted !== undefined
            ? { resultOmitted: request.resultOmitted }
            : {}),
      });
    },
    async fail(request) {
      const now = clock.now();
      const entry = owned(request, now);
      if (!entry) return 'lease-lost';
      const ttlMs = flaws.failedNeverExpires ? FOREVER_MS : request.ttlMs;
      return end(entry, {
        state: RecordStates.FAILED,
        expiresAt: now + ttlMs,
        lastError: { ...request.error },
      });
    },
    async renew(request) {
      const now = clock.now();
      const entry = owned(request, now);
      if (!entry) return 'lease-lost';
      entry.leaseExpiresAt = now + request.leaseMs;
      entry.expiresAt = Math.max(entry.expiresAt ?? 0, entry.leaseExpiresAt + entry.retainMs);
      return 'ok';
    },
    async release(request) {
      const entry = owned(request, clock.now());
      return entry ? end(entry, { state: RecordStates.RELEASED }) : 'lease-lost';
    },
    async inspect(id) {
      const entry = live(id, clock.now());
      if (!entry) return undefined;
      const { token: _token, retainMs: _retainMs, ...record } = entry;
      return structuredClone(record);
    },
    async completeMany(requests) {
      if (closed) throw new StoreClosedError();
      if (flaws.batchCompletionAllOrNothing) {
        for (const request of requests) assertResultFits(request.result, DEFAULT_MAX_RESULT_BYTES);
      }
      const order = flaws.batchCompletionsByCall
        ? byCall(requests)
        : requests.map((_, index) => index);
      const outcomes: SettledTransition[] = [];
      for (const index of order) {
        outcomes.push(await settle(store.complete(requests[index] as CompleteRequest)));
      }
      return outcomes;
    },
    async close() {
      closed = true;
    },
  };
  return store;
}

/** Request indexes grouped as a store sending one call per settings would group them. */
function byCall(requests: readonly CompleteRequest[]): number[] {
  const calls = new Map<string, number[]>();
  requests.forEach((request, index) => {
    const stores = request.result === undefined ? (request.resultOmitted ?? 'nothing') : 'result';
    const call = `${request.ttlMs}/${stores}`;
    calls.set(call, [...(calls.get(call) ?? []), index]);
  });
  return [...calls.values()].flat();
}
