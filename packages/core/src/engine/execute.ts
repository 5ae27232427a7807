import { ErrorCodes } from '../errors/codes.js';
import { NonRetriableError, toError } from '../errors/handler.js';
import { type IdemqError, isIdemqError } from '../errors/idemqError.js';
import {
  ResultNotSerializableError,
  refusesRecord,
  StoreUnavailableError,
} from '../errors/store.js';
import { fingerprint } from '../ids/fingerprint.js';
import {
  type CompleteRequest,
  isTransactionalStore,
  type ResultOmission,
  type Store,
  type StoredError,
  type StoreTransaction,
  type TransitionOutcome,
} from '../store/store.js';
import type { AbandonListener, Abandonment } from './abandonment.js';
import { COMPLETE_TRIES } from './defaults.js';
import type { HeldClaim, LeaseKeeper, LeaseListener, RenewalScheduler } from './leaseKeeper.js';
import type { HandlerContext, ResultSerializer, RunOptions } from './types.js';

/** The resolved settings `execute` works with. */
export interface ExecuteSettings {
  store: Store;
  scope: string;
  leaseMs: number;
  completedTtlMs: number;
  failedTtlMs: number;
  heartbeat: boolean;
  onStoreError: 'retry' | 'process';
  /** Present when results are stored and returned to duplicates. */
  serializer: ResultSerializer | undefined;
  /** Claims beyond this attempt are refused without running (a crash loop). */
  maxAttempts: number;
  /** Keeps the leases of running handlers alive (one timer for all of them). */
  renewals: RenewalScheduler;
}

/** Everything that can come of one attempt to process a request. */
export type Execution<R> =
  | {
      kind: 'processed';
      result: R;
      attempt: number;
      fencingToken: number;
      unstored?: UnstoredResult;
    }
  | { kind: 'processed-unclaimed'; result: R; attempt: number; storeError: Error }
  | { kind: 'duplicate'; result?: R; resultOmitted?: ResultOmission; completedAt: number }
  | { kind: 'in-progress'; retryAfterMs: number; attempt: number }
  | { kind: 'key-reuse' }
  /** `result` when the handler returned and its completion was refused. */
  | { kind: 'lease-lost'; attempt: number; result?: R }
  /**
   * The caller aborted (consumer stopping, `run()`'s signal) and the handler gave up: claim
   * released, no attempt counted. `error` is what the handler threw.
   */
  | { kind: 'abandoned'; attempt: number; error: Error }
  | { kind: 'failed'; error: Error; attempt: number; retriable: boolean }
  | { kind: 'exhausted'; attempt: number; lastError: StoredError | undefined }
  | { kind: 'store-error'; error: Error; attempt: number | undefined };

/** A result that results are stored for but this one could not be: why, and the refusal. */
export interface UnstoredResult {
  reason: ResultOmission;
  error: IdemqError;
}

/** What `complete` is asked to store: the serialized result, why there is none, or nothing. */
type ResultToStore = string | UnstoredResult | undefined;

export interface ExecuteHooks extends RunOptions {
  /** When the heartbeat learns the lease is gone. */
  onLeaseLost?: (attempt: number) => void;
  /**
   * The consumer's abandon switch: when thrown, stop renewing the lease, abort `ctx.signal`,
   * and release the claim (no attempt counted) when the handler then fails.
   */
  abandon?: Abandonment;
  /** Attempt reported for a fail-open run, which has no record to count it. @default 1 */
  unclaimedAttempt?: number;
}

/**
 * Claims `requestId`, runs `fn` under a renewed lease, and records the outcome: the one place
 * where the record state machine is driven. Never throws for the handler's or the store's
 * errors: it reports them as an `Execution`, and the caller maps that to a settlement.
 */
export async function execute<R>(
  settings: ExecuteSettings,
  requestId: string,
  fn: (ctx: HandlerContext) => Promise<R> | R,
  hooks: ExecuteHooks = {},
): Promise<Execution<R>> {
  const { store } = settings;
  const scope = hooks.scope ?? settings.scope;
  const payloadFingerprint = hooks.payload === undefined ? undefined : fingerprint(hooks.payload);

  let claim: Awaited<ReturnType<Store['claim']>>;
  const claimSentAt = performance.now();
  try {
    // Literal objects, not spreads: built on every message, and spreads are several times dearer.
    claim = await store.claim(
      payloadFingerprint === undefined
        ? { scope, requestId, leaseMs: settings.leaseMs, retainMs: settings.failedTtlMs }
        : {
            scope,
            requestId,
            leaseMs: settings.leaseMs,
            retainMs: settings.failedTtlMs,
            fingerprint: payloadFingerprint,
          },
    );
  } catch (thrown) {
    const error = asStoreError(thrown);
    // Fail-open is for a store that cannot answer; one that refuses this record never runs it.
    if (settings.onStoreError !== 'process' || refusesRecord(error))
      return { kind: 'store-error', error, attempt: undefined };
    return runUnclaimed(requestId, fn, hooks, error);
  }

  switch (claim.status) {
    case 'duplicate': {
      const { completedAt } = claim;
      if (!settings.serializer) return { kind: 'duplicate', completedAt };
      if (claim.result !== undefined) {
        const result = settings.serializer.deserialize(claim.result) as R;
        return { kind: 'duplicate', result, completedAt };
      }
      return claim.resultOmitted === undefined
        ? { kind: 'duplicate', completedAt }
        : { kind: 'duplicate', resultOmitted: claim.resultOmitted, completedAt };
    }
    case 'in-progress':
      return { kind: 'in-progress', retryAfterMs: claim.retryAfterMs, attempt: claim.attempt };
    case 'key-reuse':
      return { kind: 'key-reuse' };
    case 'claimed':
      break;
  }

  const { token, attempt, fencingToken } = claim;
  const fenced = { scope, requestId, token };

  if (attempt > settings.maxAttempts) {
    const exhausted = await recordFailure<R>(
      settings,
      fenced,
      attempt,
      new NonRetriableError(
        `claimed for attempt ${attempt}, over maxAttempts ${settings.maxAttempts}`,
      ),
      false,
    );
    return exhausted.kind === 'failed'
      ? { kind: 'exhausted', attempt, lastError: claim.previousError }
      : exhausted;
  }

  let transaction: StoreTransaction | undefined;
  if (isTransactionalStore(store)) {
    try {
      transaction = await store.openTransaction(fenced);
    } catch (thrown) {
      // Nothing ran: give the claim back so the retry need not wait for the lease to lapse.
      await store.release(fenced).catch(() => undefined);
      return { kind: 'store-error', error: asStoreError(thrown), attempt };
    }
  }

  const run = new RunContext(requestId, attempt, fencingToken, claim.previousError, hooks);
  if (transaction) run.transaction = transaction.handle;
  const keeper = settings.heartbeat
    ? settings.renewals.keep(fenced, settings.leaseMs, claimSentAt, run)
    : undefined;
  run.keeper = keeper;
  run.leaseRemainingMs = keeper
    ? () => keeper.remainingMs()
    : () => Math.max(0, settings.leaseMs - (performance.now() - claimSentAt));
  hooks.abandon?.onAbort(run);
  const abortFromCaller = hooks.signal ? () => run.abort(hooks.signal?.reason) : undefined;
  if (abortFromCaller) {
    if (hooks.signal?.aborted) abortFromCaller();
    hooks.signal?.addEventListener('abort', abortFromCaller, { once: true });
  }

  let result: R;
  try {
    result = await fn(run);
  } catch (thrown) {
    const error = toError(thrown);
    await transaction?.rollback();
    if (hooks.abandon?.aborted || (hooks.signal?.aborted && hooks.onAbort !== 'fail')) {
      // Stopped or gone away, not failed: give the claim back without counting an attempt.
      await store.release(fenced).catch(() => undefined);
      return { kind: 'abandoned', attempt, error };
    }
    return recordFailure(settings, fenced, attempt, error, isRetriable(error));
  } finally {
    keeper?.stop();
    hooks.abandon?.onAbort(undefined);
    if (abortFromCaller) hooks.signal?.removeEventListener('abort', abortFromCaller);
  }

  // No result is stored for `undefined`: a duplicate then replays `undefined`, not `null`.
  const toStore =
    settings.serializer && result !== undefined
      ? serializeResult(settings.serializer, result)
      : undefined;
  if (transaction) {
    return commitRecord(settings, transaction, fenced, toStore, result, attempt, fencingToken);
  }
  return completeRecord(settings, fenced, toStore, result, attempt, fencingToken);
}

/**
 * The serialized result, or why it cannot be stored: the handler has succeeded, so a result the
 * serializer refuses is left out of the record rather than turned into a failure.
 */
function serializeResult(serializer: ResultSerializer, result: unknown): string | UnstoredResult {
  try {
    return serializer.serialize(result);
  } catch (thrown) {
    const error =
      thrown instanceof ResultNotSerializableError
        ? thrown
        : new ResultNotSerializableError(toError(thrown).message, thrown);
    return { reason: 'not-serializable', error };
  }
}

/** Records a failure; a refused token means someone else owns the record now. */
async function recordFailure<R>(
  settings: ExecuteSettings,
  fenced: HeldClaim,
  attempt: number,
  error: Error,
  retriable: boolean,
): Promise<Execution<R>> {
  try {
    const outcome = await settings.store.fail({
      scope: fenced.scope,
      requestId: fenced.requestId,
      token: fenced.token,
      ttlMs: settings.failedTtlMs,
      error: storedError(error),
    });
    if (outcome === 'lease-lost') return { kind: 'lease-lost', attempt };
  } catch (thrown) {
    // The failure is not recorded; the lease lapses and a redelivery claims again.
    return { kind: 'store-error', error: asStoreError(thrown), attempt };
  }
  return { kind: 'failed', error, attempt, retriable };
}

/**
 * Records the completion. The side effect has happened, so nothing here may make the handler run
 * again: a transient store error is tried again, and a result over the store's size limit is
 * left out of the record (marked `too-large`) instead of failing the attempt. A store that
 * refuses the record is not asked again: the delivery is dead-lettered (`decide`).
 */
async function completeRecord<R>(
  settings: ExecuteSettings,
  fenced: HeldClaim,
  toStore: ResultToStore,
  result: R,
  attempt: number,
  fencingToken: number,
): Promise<Execution<R>> {
  let stored = toStore;
  let lastError: Error | undefined;
  let tryNumber = 1;
  while (tryNumber <= COMPLETE_TRIES) {
    try {
      const outcome = await settings.store.complete(
        completeRequest(fenced, settings.completedTtlMs, stored),
      );
      return processedOrLost(outcome, stored, result, attempt, fencingToken);
    } catch (thrown) {
      if (typeof stored === 'string' && isTooLarge(thrown)) {
        // Refused before anything was written: the record is still ours to complete.
        stored = { reason: 'too-large', error: thrown };
        continue;
      }
      lastError = asStoreError(thrown);
      // Refused for this record: asking again gets the same answer.
      if (refusesRecord(lastError)) break;
      await new Promise((resolve) => setTimeout(resolve, 10 * tryNumber));
      tryNumber += 1;
    }
  }
  return {
    kind: 'store-error',
    error: lastError ?? new StoreUnavailableError('complete failed'),
    attempt,
  };
}

/**
 * Records the completion inside the handler's transaction and commits both. Unlike a completion
 * on its own it cannot be tried again: the transaction ends with the first answer. A connection
 * that failed leaves the outcome unknown (a store error: the claim is given back, and a retry
 * finds the record COMPLETED if the commit went through); a commit the database refused rolled
 * the handler's writes back, so it counts as the run's failure.
 */
async function commitRecord<R>(
  settings: ExecuteSettings,
  transaction: StoreTransaction,
  fenced: HeldClaim,
  toStore: ResultToStore,
  result: R,
  attempt: number,
  fencingToken: number,
): Promise<Execution<R>> {
  let stored = toStore;
  for (;;) {
    try {
      const outcome = await transaction.commit(
        completeRequest(fenced, settings.completedTtlMs, stored),
      );
      return processedOrLost(outcome, stored, result, attempt, fencingToken);
    } catch (thrown) {
      if (typeof stored === 'string' && isTooLarge(thrown)) {
        stored = { reason: 'too-large', error: thrown };
        continue;
      }
      await transaction.rollback();
      const error = toError(thrown);
      if (isIdemqError(error) && error.code === ErrorCodes.STORE_UNAVAILABLE) {
        // Fenced: refused if the commit did go through, so it never undoes a completion.
        await settings.store.release(fenced).catch(() => undefined);
        return { kind: 'store-error', error, attempt };
      }
      return recordFailure(settings, fenced, attempt, error, isRetriable(error));
    }
  }
}

function completeRequest(fenced: HeldClaim, ttlMs: number, stored: ResultToStore): CompleteRequest {
  const { scope, requestId, token } = fenced;
  if (stored === undefined) return { scope, requestId, token, ttlMs };
  return typeof stored === 'string'
    ? { scope, requestId, token, ttlMs, result: stored }
    : { scope, requestId, token, ttlMs, resultOmitted: stored.reason };
}

function processedOrLost<R>(
  outcome: TransitionOutcome,
  stored: ResultToStore,
  result: R,
  attempt: number,
  fencingToken: number,
): Execution<R> {
  if (outcome === 'lease-lost') return { kind: 'lease-lost', attempt, result };
  return typeof stored === 'object'
    ? { kind: 'processed', result, attempt, fencingToken, unstored: stored }
    : { kind: 'processed', result, attempt, fencingToken };
}

function isTooLarge(thrown: unknown): thrown is IdemqError {
  return isIdemqError(thrown) && thrown.code === ErrorCodes.RESULT_TOO_LARGE;
}

/** Fail-open: run without a claim because the user chose availability over idempotency. */
async function runUnclaimed<R>(
  requestId: string,
  fn: (ctx: HandlerContext) => Promise<R> | R,
  hooks: ExecuteHooks,
  storeError: Error,
): Promise<Execution<R>> {
  const attempt = hooks.unclaimedAttempt ?? 1;
  // Unclaimed: no lease protects this run (leaseRemainingMs stays 0).
  const ctx = new RunContext(requestId, attempt, 0, undefined, hooks);
  const abortFromCaller = () => ctx.abort(hooks.signal?.reason);
  if (hooks.signal?.aborted) abortFromCaller();
  hooks.signal?.addEventListener('abort', abortFromCaller, { once: true });
  hooks.abandon?.onAbort(ctx);
  try {
    return { kind: 'processed-unclaimed', result: await fn(ctx), attempt, storeError };
  } catch (thrown) {
    const error = toError(thrown);
    return { kind: 'failed', error, attempt, retriable: isRetriable(error) };
  } finally {
    hooks.abandon?.onAbort(undefined);
    hooks.signal?.removeEventListener('abort', abortFromCaller);
  }
}

function isRetriable(error: Error): boolean {
  return !(isIdemqError(error) && !error.retriable);
}

function asStoreError(thrown: unknown): Error {
  if (isIdemqError(thrown)) return thrown;
  return new StoreUnavailableError(
    thrown instanceof Error ? `Store failed: ${thrown.message}` : 'Store failed',
    { cause: thrown },
  );
}

function storedError(error: Error): StoredError {
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message.slice(0, 1024),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/**
 * The handler's context, and the listener of its lease and abandonment: a class, so `signal` is
 * one getter on the prototype rather than an accessor built per message, the lease and the
 * consumer call its methods instead of closures made per message, and its AbortController is
 * only made when a handler reads the signal or the run is aborted (most runs do neither).
 */
class RunContext implements HandlerContext, LeaseListener, AbandonListener {
  private controller: AbortController | undefined;
  leaseRemainingMs: () => number = zeroLease;
  /** Renews the lease while the handler runs (heartbeat on). */
  keeper: LeaseKeeper | undefined;
  declare previousError?: StoredError;
  declare transaction?: unknown;

  constructor(
    readonly requestId: string,
    readonly attempt: number,
    readonly fencingToken: number,
    previousError: StoredError | undefined,
    private readonly hooks: ExecuteHooks,
  ) {
    if (previousError !== undefined) this.previousError = previousError;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.controller ??= new AbortController();
    this.controller.abort(reason);
  }

  leaseRenewed(leaseMs: number): void {
    const hook = this.hooks.onLeaseRenewed;
    if (!hook) return;
    // A hook's failure must not become an unhandled rejection: renewal itself succeeded.
    Promise.resolve()
      .then(() => hook(leaseMs))
      .catch(() => {});
  }

  leaseLost(): void {
    this.abort(new Error(`lease on ${this.requestId} lost`));
    this.hooks.onLeaseLost?.(this.attempt);
  }

  /**
   * Abandoned (consumer stopping): stop renewing so the lease lapses and another process can
   * take the message over even if this handler never returns.
   */
  abandoned(reason: unknown): void {
    this.keeper?.stop();
    this.abort(reason);
  }
}

const zeroLease = () => 0;
