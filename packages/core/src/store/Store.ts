/**
 * The idempotency store contract. One record per (scope, requestId); every method that changes a
 * record is a single atomic operation in the store, and every one after `claim` is fenced by the
 * owner token the claim returned. Time (leases, TTLs) is the store's own, never the caller's.
 *
 * Implementations: `memoryStore()` here, `redisStore()` in `@idemq/redis`. Both must pass
 * `runStoreConformance` from `@idemq/conformance`.
 */
export interface Store {
  /**
   * Atomically claims a record:
   * - absent, FAILED, or IN_PROGRESS with an expired lease → `claimed` (new token, attempt + 1)
   * - RELEASED → `claimed` (new token, same attempt)
   * - COMPLETED → `duplicate` (with the stored result, or the marker saying why it was not stored)
   * - IN_PROGRESS with a live lease → `in-progress` (with the time left on the lease)
   * - any state whose fingerprint differs from the request's → `key-reuse`
   */
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  /** Claims many records in one round trip; outcomes are in request order. */
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
  /** IN_PROGRESS (owned by `token`) → FAILED for `ttlMs`, remembering attempt and error. */
  fail(request: FailRequest): Promise<TransitionOutcome>;
  /** Extends the lease of an IN_PROGRESS record owned by `token` to `leaseMs` from now. */
  renew(request: RenewRequest): Promise<TransitionOutcome>;
  /**
   * Gives the claim back without counting a failure: the record becomes RELEASED, claimable at
   * once, and the next claim reuses this attempt number instead of adding one.
   */
  release(request: FencedRequest): Promise<TransitionOutcome>;
  /** Reads a record without changing it (tooling and tests); `undefined` when absent. */
  inspect(key: RecordId): Promise<IdempotencyRecord | undefined>;
  /** Releases the store's resources. Idempotent. Operations afterwards reject. */
  close(): Promise<void>;
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
  /** SHA-256 of the payload; a later claim with a different one gets `key-reuse`. */
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
   * (`IDEMQ_ERR_RESULT_TOO_LARGE`) and write nothing.
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
  | { status: 'duplicate'; result?: string; resultOmitted?: ResultOmission; completedAt: number }
  | { status: 'in-progress'; retryAfterMs: number; attempt: number }
  | { status: 'key-reuse' };

export interface ClaimedOutcome {
  status: 'claimed';
  /** Opaque owner token; pass it to complete / fail / renew / release. */
  token: string;
  /** Strictly increasing per record for the store's lifetime: for downstream conditional writes. */
  fencingToken: number;
  /** 1 on the first claim; +1 on every claim after a failure or lease takeover. */
  attempt: number;
  /** Store time (epoch ms) at which the lease lapses unless renewed. */
  leaseExpiresAt: number;
  /** The error of the previous attempt, when it failed. */
  previousError?: StoredError;
}

/** `ok`, or `lease-lost` when the token no longer owns the record (nothing was changed). */
export type TransitionOutcome = 'ok' | 'lease-lost';

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
  /** IN_PROGRESS only. */
  leaseExpiresAt?: number;
  /** COMPLETED only: store time of completion. */
  completedAt?: number;
  /** When the record disappears. */
  expiresAt?: number;
  lastError?: StoredError;
  result?: string;
  /** COMPLETED only: why no result was stored (see `CompleteRequest.resultOmitted`). */
  resultOmitted?: ResultOmission;
}
