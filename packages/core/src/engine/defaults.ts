/** Defaults of `createIdempotency` (and the idempotency part of `createConsumer`). */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({
  leaseMs: 40_000,
  completedTtlMs: 24 * 60 * 60 * 1000,
  failedTtlMs: 24 * 60 * 60 * 1000,
  heartbeat: true,
  onStoreError: 'retry' as 'retry' | 'process',
  storeResults: false,
  maxRequestIdBytes: 512,
  inProgressRetryMaxDelayMs: 5_000,
});

/** Defaults of the retry policy. */
export const RETRY_DEFAULTS = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  jitter: 'full' as 'full' | 'none',
});

/** Defaults of `createConsumer` beyond the idempotency ones. */
export const CONSUMER_DEFAULTS = Object.freeze({
  group: 'default',
  concurrency: 10,
  storeErrorRetryDelayMs: 5_000,
  /** `IDEMPOTENCY_DEFAULTS.inProgressRetryMaxDelayMs`, also listed here where it was first. */
  inProgressRetryMaxDelayMs: IDEMPOTENCY_DEFAULTS.inProgressRetryMaxDelayMs,
  drainTimeoutMs: 30_000,
});

/** How many times a `complete` that hit a store error is tried before giving up. */
export const COMPLETE_TRIES = 3;
