import { randomUUID } from 'node:crypto';
import { StoreClosedError } from '../errors/store.js';
import { recordKey } from '../ids/recordKey.js';
import { type Clock, monotonicClock } from '../observability/clock.js';
import { OptionsCheck } from '../options/optionsCheck.js';
import { completeEach } from './completeEach.js';
import { assertResultFits, DEFAULT_MAX_RESULT_BYTES } from './resultLimit.js';
import {
  type ClaimOutcome,
  type ClaimRequest,
  type CompleteRequest,
  type FailRequest,
  type FencedRequest,
  type IdempotencyRecord,
  type RecordId,
  type RecordState,
  RecordStates,
  type RenewRequest,
  type Store,
  type TransitionOutcome,
} from './store.js';

export interface MemoryStoreOptions {
  /**
   * Store time. Defaults to a monotonic clock, so system clock steps change no expiry.
   * @default monotonicClock
   */
  clock?: Clock;
  /**
   * Largest stored result, in UTF-8 bytes.
   * @default 65536
   */
  maxResultBytes?: number;
  /**
   * How often expired records are swept out (they are also dropped lazily on access).
   * @default 60000
   */
  sweepIntervalMs?: number;
}

export const MEMORY_STORE_DEFAULTS = Object.freeze({
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
  sweepIntervalMs: 60_000,
});

interface Entry extends IdempotencyRecord {
  token?: string;
  retainMs: number;
}

/**
 * An in-process `Store` with the same semantics as the Redis store: atomic claims, fenced
 * transitions, TTLs, attempts. For tests, demos and single-process apps; it forgets everything
 * when the process exits.
 *
 * @example
 * const store = memoryStore();
 * const idem = createIdempotency({ store, scope: 'billing' });
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  new OptionsCheck('memoryStore')
    .integer('maxResultBytes', options.maxResultBytes, 0)
    .integer('sweepIntervalMs', options.sweepIntervalMs, 1)
    .expect(
      options.clock === undefined || typeof options.clock?.now === 'function',
      'clock must be an object with now()',
    )
    .done();
  const clock = options.clock ?? monotonicClock;
  const maxResultBytes = options.maxResultBytes ?? MEMORY_STORE_DEFAULTS.maxResultBytes;
  const entries = new Map<string, Entry>();
  let fenceCounter = 0;
  let closed = false;

  const sweeper = setInterval(() => {
    const now = clock.now();
    for (const [key, entry] of entries) if (isExpired(entry, now)) entries.delete(key);
  }, options.sweepIntervalMs ?? MEMORY_STORE_DEFAULTS.sweepIntervalMs);
  sweeper.unref();

  function assertOpen(): void {
    if (closed) throw new StoreClosedError();
  }

  /** Reads a live entry, dropping it when its TTL has passed. */
  function live(id: RecordId, now: number): [string, Entry | undefined] {
    assertOpen();
    const key = recordKey('idemq', id.scope, id.requestId);
    const entry = entries.get(key);
    if (entry && isExpired(entry, now)) {
      entries.delete(key);
      return [key, undefined];
    }
    return [key, entry];
  }

  /** The entry when `token` owns it, else undefined. */
  function owned(request: FencedRequest, now: number): [string, Entry | undefined] {
    const [key, entry] = live(request, now);
    const owns = entry?.state === RecordStates.IN_PROGRESS && entry.token === request.token;
    return [key, owns ? entry : undefined];
  }

  function claimOne(request: ClaimRequest, now: number): ClaimOutcome {
    const [key, entry] = live(request, now);
    if (entry?.fingerprint && request.fingerprint && entry.fingerprint !== request.fingerprint) {
      return { status: 'key-reuse' };
    }
    if (entry?.state === RecordStates.COMPLETED) {
      return {
        status: 'duplicate',
        completedAt: entry.completedAt ?? now,
        ...(entry.result === undefined ? {} : { result: entry.result }),
        ...optional('resultOmitted', entry.resultOmitted),
      };
    }
    if (entry?.state === RecordStates.IN_PROGRESS && (entry.leaseExpiresAt ?? 0) > now) {
      return {
        status: 'in-progress',
        retryAfterMs: (entry.leaseExpiresAt ?? now) - now,
        attempt: entry.attempt,
      };
    }
    const fencingToken = ++fenceCounter;
    const token = `${fencingToken}.${randomUUID()}`;
    const leaseExpiresAt = now + request.leaseMs;
    const claimed: Entry = {
      scope: request.scope,
      requestId: request.requestId,
      state: RecordStates.IN_PROGRESS,
      // A released claim was never an attempt: the next claim takes over its number.
      attempt: (entry?.attempt ?? 0) + (entry?.state === RecordStates.RELEASED ? 0 : 1),
      fencingToken,
      token,
      leaseExpiresAt,
      expiresAt: leaseExpiresAt + request.retainMs,
      retainMs: request.retainMs,
      ...optional('fingerprint', request.fingerprint ?? entry?.fingerprint),
      ...optional('lastError', entry?.lastError),
    };
    entries.set(key, claimed);
    return {
      status: 'claimed',
      token,
      fencingToken,
      attempt: claimed.attempt,
      leaseExpiresAt,
      ...optional('previousError', entry?.lastError),
    };
  }

  async function complete(request: CompleteRequest): Promise<TransitionOutcome> {
    assertResultFits(request.result, maxResultBytes);
    const now = clock.now();
    const [key, entry] = owned(request, now);
    if (!entry) return 'lease-lost';
    entries.set(key, {
      ...endedAs(entry, RecordStates.COMPLETED, now + request.ttlMs),
      completedAt: now,
      ...optional('result', request.result),
      // A result, when there is one, is the answer: a marker beside it would contradict it.
      ...optional(
        'resultOmitted',
        request.result === undefined ? request.resultOmitted : undefined,
      ),
    });
    return 'ok';
  }

  return {
    async claim(request) {
      return claimOne(request, clock.now());
    },

    async claimMany(requests) {
      // Also an empty batch: a closed store answers nothing.
      assertOpen();
      const now = clock.now();
      return requests.map((request) => claimOne(request, now));
    },

    async completeMany(requests) {
      // Also an empty batch: a closed store answers nothing.
      assertOpen();
      return completeEach(complete, requests);
    },

    complete,

    async fail(request: FailRequest): Promise<TransitionOutcome> {
      const now = clock.now();
      const [key, entry] = owned(request, now);
      if (!entry) return 'lease-lost';
      entries.set(key, {
        ...endedAs(entry, RecordStates.FAILED, now + request.ttlMs),
        lastError: { ...request.error },
      });
      return 'ok';
    },

    async renew(request: RenewRequest): Promise<TransitionOutcome> {
      const now = clock.now();
      const [, entry] = owned(request, now);
      if (!entry) return 'lease-lost';
      entry.leaseExpiresAt = now + request.leaseMs;
      entry.expiresAt = Math.max(entry.expiresAt ?? 0, entry.leaseExpiresAt + entry.retainMs);
      return 'ok';
    },

    async release(request: FencedRequest): Promise<TransitionOutcome> {
      const now = clock.now();
      const [key, entry] = owned(request, now);
      if (!entry) return 'lease-lost';
      const { token: _token, leaseExpiresAt: _lease, ...rest } = entry;
      entries.set(key, { ...rest, state: RecordStates.RELEASED });
      return 'ok';
    },

    async inspect(id) {
      const [, entry] = live(id, clock.now());
      if (!entry) return undefined;
      const { token: _token, retainMs: _retainMs, ...record } = entry;
      return structuredClone(record);
    },

    async close() {
      closed = true;
      clearInterval(sweeper);
      entries.clear();
    },
  };
}

/**
 * What a record keeps when its claim ends in `state` (a completion or a failure): its identity,
 * attempt, fencing token and fingerprint; not the owner, lease or remembered error.
 */
function endedAs(entry: Entry, state: RecordState, expiresAt: number): Entry {
  return {
    scope: entry.scope,
    requestId: entry.requestId,
    state,
    attempt: entry.attempt,
    fencingToken: entry.fencingToken,
    expiresAt,
    retainMs: entry.retainMs,
    ...optional('fingerprint', entry.fingerprint),
  };
}

function isExpired(entry: Entry, now: number): boolean {
  return entry.expiresAt !== undefined && entry.expiresAt <= now;
}

/** `{ [key]: value }` when value is defined, else `{}`: keeps optional fields truly absent. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
