/**
 * The idempotency store contract: every rule below binds every implementation, and
 * `runStoreConformance` (S01–S21) and `runStoreModel` from `@idemq/conformance` check them;
 * `memoryStore()` here and `redisStore()` in `@idemq/redis` (standalone and Cluster) pass them.
 *
 * - **Records.** One record per `(scope, requestId)`, both compared as exact strings. Every
 *   method is one atomic operation on each record it touches: of concurrent claims of one id
 *   exactly one wins.
 * - **Time** (leases, TTLs, `completedAt`, `leaseExpiresAt`) is the store's own clock, never the
 *   caller's: a client clock that jumps changes no decision.
 * - **Expiry.** Every record expires, and is then absent (a new claim is attempt 1): an
 *   IN_PROGRESS record at `leaseExpiresAt + retainMs` (a renewal pushes it out, never in), a
 *   COMPLETED or FAILED one `ttlMs` after its transition; a RELEASED one keeps the expiry it had.
 * - **Ownership (fencing).** `complete`, `fail`, `renew` and `release` answer `ok` only while
 *   the record is IN_PROGRESS under the claim whose `token` they pass. A lapsed lease does not
 *   end that ownership by itself: until another claim takes the record over (or it expires),
 *   the owner may still complete, fail, renew or release it — refusing a slow owner that
 *   finished would only force a second execution. Any other token (taken over, spent by a
 *   completion, failure or release, forged, or of an absent record) gets `lease-lost`, and
 *   nothing changes: no field, no expiry, no record created.
 * - **Fingerprints** are compared only when both the claim and the record carry one; when they
 *   differ the claim is `key-reuse` whatever the record's state (live or lapsed IN_PROGRESS,
 *   COMPLETED, FAILED, RELEASED), and nothing changes. A claim without one is never
 *   `key-reuse`, and a record without one accepts any. A claim that wins stores its
 *   fingerprint, or keeps the record's when it has none: a takeover may add a fingerprint to
 *   a record that had none, never drop or change one. `duplicate` and `in-progress` change
 *   nothing (a COMPLETED record without a fingerprint stays without).
 * - **Failures.** A store that cannot be reached or does not answer in time rejects with a
 *   retriable `StoreUnavailableError` (`IDEMQ_ERR_STORE_UNAVAILABLE`) within a bounded time,
 *   never hangs. Such a rejection does not say whether the operation was applied; a claim it
 *   left behind lapses like any other. A store that answers and refuses in a way that asking
 *   again will not change rejects with `StoreRejectedError` (`IDEMQ_ERR_STORE_REJECTED`, not
 *   retriable): `affects: 'record'` when only that record is concerned — the operation changed
 *   nothing of it, and the other records of the same call get their own outcomes — and
 *   `affects: 'store'` when every operation would be refused (its configuration).
 * - **Close.** `close()` may be called any number of times, concurrently too; every call
 *   resolves. Afterwards every method — `claim`, `claimMany` and `completeMany` (an empty batch
 *   too), `complete`, `fail`, `renew`, `release`, `inspect` — rejects with `StoreClosedError`
 *   (`IDEMQ_ERR_STORE_CLOSED`, not retriable) and touches no record. Operations already under
 *   way when it is called may settle either way. A client the caller passed in is not closed.
 */
export interface Store {
  /**
   * Atomically claims a record. In this order:
   * - fingerprints differ (see above) → `key-reuse`
   * - COMPLETED → `duplicate`, with the store time it completed and its stored result, if any,
   *   or the marker saying why no result was stored (`resultOmitted`)
   * - IN_PROGRESS with a live lease → `in-progress`, with the record's attempt and the time left
   *   on its lease by the store's clock (`retryAfterMs` = `leaseExpiresAt` − store now, so
   *   `0 < retryAfterMs ≤` the lease it was given; never a constant: S01, S03 and the model
   *   check it). The engine advises callers to come back after it, at most
   *   `inProgressRetryMaxDelayMs`.
   * - absent → `claimed`, attempt 1
   * - FAILED, or IN_PROGRESS with a lapsed lease (a takeover: the old token is refused from now
   *   on) → `claimed`, attempt + 1
   * - RELEASED → `claimed`, same attempt (a released claim was not an attempt)
   *
   * `claimed` carries a new owner token, a fencing token above every earlier one of this id,
   * the lease (`leaseExpiresAt` = store now + `leaseMs`) and, when the record remembers a
   * failure (its last `fail` since it was created, kept across takeovers and releases), that
   * error as `previousError`.
   */
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  /**
   * Claims many records in one round trip: one outcome per request, in request order, each
   * exactly what `claim` would answer at that point. Atomic per record, not per batch: other
   * callers' operations may fall between two claims of a batch, and a batch that rejects may
   * have claimed some of its ids (they lapse like any unused claim). The same id twice acts as
   * two claims in request order: the later sees the earlier (`in-progress` after it claimed,
   * `key-reuse` when their fingerprints differ), whatever the settings of each. An empty batch
   * resolves `[]`.
   */
  claimMany(requests: readonly ClaimRequest[]): Promise<ClaimOutcome[]>;
  /**
   * IN_PROGRESS (owned by `token`) → COMPLETED for `ttlMs`, with the request's `result` or, in
   * its place, its `resultOmitted` marker; duplicates get whichever was stored.
   *
   * A `result` over the store's limit (`maxResultBytes`, in UTF-8 bytes;
   * `DEFAULT_MAX_RESULT_BYTES` = 64 KiB unless configured) is refused before anything is
   * written: `complete` rejects with `ResultTooLargeError` (`IDEMQ_ERR_RESULT_TOO_LARGE`, not
   * retriable), the record stays IN_PROGRESS under the same token, and the owner may complete
   * again without the result (the engine does, with `resultOmitted: 'too-large'`).
   */
  complete(request: CompleteRequest): Promise<TransitionOutcome>;
  /**
   * Completes many records in one round trip (one per Cluster slot): one settled outcome per
   * request, in request order, each what `complete` would have resolved or rejected with at that
   * point — so a result over the limit, a record the store refuses or a call that timed out
   * concerns its own requests, and the others are made. Atomic per record, not per batch. The
   * same claim twice acts as two completions in request order: the first completes, the later
   * is `lease-lost`. An empty batch resolves `[]`; only a closed store rejects the whole call.
   */
  completeMany(requests: readonly CompleteRequest[]): Promise<SettledTransition[]>;
  /**
   * IN_PROGRESS (owned by `token`) → FAILED for `ttlMs`, keeping attempt and fingerprint and
   * remembering `error` (in place of any earlier one) for the next claim's `previousError`.
   */
  fail(request: FailRequest): Promise<TransitionOutcome>;
  /**
   * Sets the lease of an IN_PROGRESS record owned by `token` to `leaseMs` from now (also after
   * it lapsed, while nobody took over); the record then lives at least that lease plus the
   * claim's `retainMs`.
   */
  renew(request: RenewRequest): Promise<TransitionOutcome>;
  /**
   * Gives the claim back without counting a failure: the record becomes RELEASED, claimable at
   * once, and the next claim reuses this attempt number instead of adding one. Fingerprint,
   * remembered error and expiry stay as they were.
   */
  release(request: FencedRequest): Promise<TransitionOutcome>;
  /**
   * Reads a record without changing it (tooling and tests): a copy, never the owner token;
   * `undefined` when absent or expired.
   */
  inspect(key: RecordId): Promise<IdempotencyRecord | undefined>;
  /**
   * Releases the store's resources. Idempotent; every operation afterwards rejects with
   * `StoreClosedError` (see above).
   */
  close(): Promise<void>;
}

/**
 * A store that can record a run's completion inside the handler's own database transaction (a
 * transactional inbox): the handler's writes and the COMPLETED mark commit together or not at
 * all. The engine opens one transaction per claimed run, hands its `handle` to the handler as
 * `ctx.transaction`, and ends it with `commit` (the handler returned) or `rollback` (it threw, or
 * the run was abandoned). Leases are still renewed through the store's other operations.
 */
export interface TransactionalStore extends Store {
  /** Opens the transaction of a claimed run. Rejects like any operation when the store is down. */
  openTransaction(claim: FencedRequest): Promise<StoreTransaction>;
}

/** One run's open transaction (see `TransactionalStore`). */
export interface StoreTransaction {
  /** What the handler writes through (a database client inside `BEGIN`). */
  readonly handle: unknown;
  /**
   * Writes the completion inside the transaction, fenced by `request.token` as `complete` is,
   * and commits: `ok` when both committed; `lease-lost` when the token no longer owns the record,
   * and then nothing committed. A `result` over the limit rejects with `ResultTooLargeError`
   * before anything is written, and the transaction stays open for another `commit`. A
   * `StoreUnavailableError` means the outcome is unknown (the connection failed: the transaction
   * may have committed); any other rejection means the database refused the commit and rolled
   * everything back (a serialization failure, a deferred constraint), which the engine records
   * as the run's failure.
   */
  commit(request: CompleteRequest): Promise<TransitionOutcome>;
  /** Rolls everything back and gives the connection back. Never rejects; safe to call twice. */
  rollback(): Promise<void>;
}

/** Whether `store` can commit completions in the handler's transaction. */
export function isTransactionalStore(store: Store): store is TransactionalStore {
  return typeof (store as Partial<TransactionalStore>).openTransaction === 'function';
}

/** Identifies one record. */
export interface RecordId {
  /** The idempotency namespace (a consumer group, a route). */
  scope: string;
  requestId: string;
}

export interface ClaimRequest extends RecordId {
  /** How long the claim holds before another claimant may take it over. */
  leaseMs: number;
  /**
   * How long the record is kept after its lease lapses when nobody completes or fails it
   * (a crashed owner), so that the takeover counts the lost attempt.
   */
  retainMs: number;
  /**
   * SHA-256 of the payload; a later claim with a different one gets `key-reuse`. Compared only
   * when both sides have one (see `Store`).
   */
  fingerprint?: string;
}

export interface FencedRequest extends RecordId {
  /** The owner token from `claimed`. */
  token: string;
}

export interface CompleteRequest extends FencedRequest {
  /** How long the COMPLETED record answers duplicates. */
  ttlMs: number;
  /**
   * A serialized result returned to duplicates, at most the store's `maxResultBytes` (UTF-8
   * bytes, 64 KiB by default): a longer one makes `complete` reject with `ResultTooLargeError`
   * (`IDEMQ_ERR_RESULT_TOO_LARGE`) and write nothing. Stores keep it as an opaque string and
   * return it unchanged; the limit counts it as written (a result holding bytes is base64 in it,
   * see `jsonSerializer`).
   */
  result?: string;
  /**
   * Why the handler's result is not stored although results are (pass it without `result`; a
   * store ignores it beside one): kept on the record and returned on `duplicate` claims, so a
   * duplicate can tell "no result" from "a result that could not be kept".
   */
  resultOmitted?: ResultOmission;
}

/**
 * Why a completed record holds no result although results are stored: `too-large` (over the
 * store's `maxResultBytes`) or `not-serializable` (the serializer refused it: a BigInt, a cycle,
 * a function). The handler did run; its effect stands.
 */
export type ResultOmission = 'too-large' | 'not-serializable';

export interface FailRequest extends FencedRequest {
  /** How long the FAILED record remembers its attempts. */
  ttlMs: number;
  error: StoredError;
}

export interface RenewRequest extends FencedRequest {
  leaseMs: number;
}

/** What a FAILED record keeps of the error that failed it. */
export interface StoredError {
  name: string;
  message: string;
  code?: string;
}

export type ClaimOutcome =
  | ClaimedOutcome
  /**
   * COMPLETED: `completedAt` is the store time (epoch ms) of the completion; `result` is the
   * stored text as `complete` received it (the engine's serializer decodes it).
   */
  | { status: 'duplicate'; result?: string; resultOmitted?: ResultOmission; completedAt: number }
  /** Live IN_PROGRESS: `retryAfterMs` is the time left on its lease, by the store's clock. */
  | { status: 'in-progress'; retryAfterMs: number; attempt: number }
  | { status: 'key-reuse' };

export interface ClaimedOutcome {
  status: 'claimed';
  /** Opaque owner token; pass it to complete / fail / renew / release. */
  token: string;
  /**
   * Strictly increasing per `(scope, requestId)` for the store's lifetime, also across a
   * release and across the record's expiry: for downstream conditional writes.
   */
  fencingToken: number;
  /** 1 on the first claim; +1 on every claim after a failure or lease takeover; never decreases. */
  attempt: number;
  /** Store time (epoch ms) at which the lease lapses unless renewed. */
  leaseExpiresAt: number;
  /** The record's remembered error: of its last `fail`, when it failed since it was created. */
  previousError?: StoredError;
}

/** `ok`, or `lease-lost` when the token does not own the record (nothing was changed). */
export type TransitionOutcome = 'ok' | 'lease-lost';

/**
 * One request's outcome in a batch: what the single operation would have resolved with, or the
 * error it would have rejected with (the shape of `Promise.allSettled`, with a typed reason).
 */
export type SettledTransition =
  | { status: 'fulfilled'; value: TransitionOutcome }
  | { status: 'rejected'; reason: Error };

export const RecordStates = {
  IN_PROGRESS: 'IN_PROGRESS',
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  RELEASED: 'RELEASED',
} as const;

export type RecordState = (typeof RecordStates)[keyof typeof RecordStates];

/** A record as stored. Times are store time, epoch ms. */
export interface IdempotencyRecord extends RecordId {
  state: RecordState;
  attempt: number;
  fencingToken: number;
  fingerprint?: string;
  /** IN_PROGRESS only (also once lapsed, until taken over or expired). */
  leaseExpiresAt?: number;
  /** COMPLETED only: store time of completion. */
  completedAt?: number;
  /** When the record disappears. */
  expiresAt?: number;
  /** Of the last `fail`; kept across takeovers and releases, dropped by a completion. */
  lastError?: StoredError;
  result?: string;
  /** COMPLETED only: why no result was stored (see `CompleteRequest.resultOmitted`). */
  resultOmitted?: ResultOmission;
}
