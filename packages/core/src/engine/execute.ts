import { ErrorCodes } from '../errors/codes.js';
import { NonRetriableError, StoreUnavailableError, toError } from '../errors/errors.js';
import { isIdemqError } from '../errors/IdemqError.js';
import { fingerprint } from '../ids/fingerprint.js';
import type { Store, StoredError } from '../store/Store.js';
import { COMPLETE_TRIES } from './defaults.js';
import { startLeaseKeeper } from './leaseKeeper.js';
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
}

/** Everything that can come of one attempt to process a request. */
export type Execution<R> =
  | { kind: 'processed'; result: R; attempt: number; fencingToken: number }
  | { kind: 'processed-unclaimed'; result: R; attempt: number; storeError: Error }
  | { kind: 'duplicate'; result?: R }
  | { kind: 'in-progress'; retryAfterMs: number; attempt: number }
  | { kind: 'key-reuse' }
  | { kind: 'lease-lost'; attempt: number }
  /** The caller aborted (consumer stopping) and the handler gave up: claim released. */
  | { kind: 'abandoned'; attempt: number }
  | { kind: 'failed'; error: Error; attempt: number; retriable: boolean }
  | { kind: 'exhausted'; attempt: number; lastError: StoredError | undefined }
  | { kind: 'store-error'; error: Error; attempt: number | undefined };

export interface ExecuteHooks extends RunOptions {
  /** When the heartbeat learns the lease is gone. */
  onLeaseLost?: (attempt: number) => void;
  /**
   * An abort of `signal` means "abandon": stop renewing the lease, and release the claim
   * (no attempt counted) when the handler then fails.
   */
  abandonOnAbort?: boolean;
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
  const { store, scope } = settings;
  const record = { scope, requestId };
  const payloadFingerprint = hooks.payload === undefined ? undefined : fingerprint(hooks.payload);

  let claim: Awaited<ReturnType<Store['claim']>>;
  const claimSentAt = performance.now();
  try {
    claim = await store.claim({
      ...record,
      leaseMs: settings.leaseMs,
      retainMs: settings.failedTtlMs,
      ...(payloadFingerprint === undefined ? {} : { fingerprint: payloadFingerprint }),
    });
  } catch (thrown) {
    const error = asStoreError(thrown);
    if (settings.onStoreError !== 'process')
      return { kind: 'store-error', error, attempt: undefined };
    return runUnclaimed(requestId, fn, hooks, error);
  }

  switch (claim.status) {
    case 'duplicate':
      return claim.result === undefined || !settings.serializer
        ? { kind: 'duplicate' }
        : { kind: 'duplicate', result: settings.serializer.deserialize(claim.result) as R };
    case 'in-progress':
      return { kind: 'in-progress', retryAfterMs: claim.retryAfterMs, attempt: claim.attempt };
    case 'key-reuse':
      return { kind: 'key-reuse' };
    case 'claimed':
      break;
  }

  const { token, attempt, fencingToken } = claim;
  const fenced = { ...record, token };

  /** Records a failure; a refused token means someone else owns the record now. */
  const recordFailure = async (error: Error, retriable: boolean): Promise<Execution<R>> => {
    try {
      const outcome = await store.fail({
        ...fenced,
        ttlMs: settings.failedTtlMs,
        error: storedError(error),
      });
      if (outcome === 'lease-lost') return { kind: 'lease-lost', attempt };
    } catch (thrown) {
      // The failure is not recorded; the lease lapses and a redelivery claims again.
      return { kind: 'store-error', error: asStoreError(thrown), attempt };
    }
    return { kind: 'failed', error, attempt, retriable };
  };

  if (attempt > settings.maxAttempts) {
    const exhausted = await recordFailure(
      new NonRetriableError(
        `claimed for attempt ${attempt}, over maxAttempts ${settings.maxAttempts}`,
      ),
      false,
    );
    return exhausted.kind === 'failed'
      ? { kind: 'exhausted', attempt, lastError: claim.previousError }
      : exhausted;
  }

  // Created on first use: most handlers never read ctx.signal, and most runs never abort.
  let controller: AbortController | undefined;
  const abortHandler = (reason: unknown) => {
    controller ??= new AbortController();
    controller.abort(reason);
  };
  const keeper = settings.heartbeat
    ? startLeaseKeeper({
        store,
        record,
        token,
        leaseMs: settings.leaseMs,
        heldSince: claimSentAt,
        onRenewed: (leaseMs) => {
          // A hook's failure must not become an unhandled rejection: renewal itself succeeded.
          Promise.resolve()
            .then(() => hooks.onLeaseRenewed?.(leaseMs))
            .catch(() => {});
        },
        onLost: () => {
          abortHandler(new Error(`lease on ${requestId} lost`));
          hooks.onLeaseLost?.(attempt);
        },
      })
    : undefined;
  const abortFromCaller = () => {
    // Abandoned (consumer stopping): stop renewing so the lease lapses and another process
    // can take the message over even if this handler never returns.
    if (hooks.abandonOnAbort) keeper?.stop();
    abortHandler(hooks.signal?.reason);
  };
  if (hooks.signal?.aborted) abortFromCaller();
  hooks.signal?.addEventListener('abort', abortFromCaller, { once: true });

  const ctx: HandlerContext = {
    requestId,
    attempt,
    fencingToken,
    get signal() {
      controller ??= new AbortController();
      return controller.signal;
    },
    leaseRemainingMs: keeper
      ? keeper.remainingMs
      : () => Math.max(0, settings.leaseMs - (performance.now() - claimSentAt)),
    ...(claim.previousError === undefined ? {} : { previousError: claim.previousError }),
  };

  let result: R;
  try {
    result = await fn(ctx);
  } catch (thrown) {
    if (hooks.abandonOnAbort && hooks.signal?.aborted) {
      // Stopped, not failed: give the claim back without counting an attempt.
      await store.release(fenced).catch(() => undefined);
      return { kind: 'abandoned', attempt };
    }
    const error = toError(thrown);
    return recordFailure(error, isRetriable(error));
  } finally {
    keeper?.stop();
    hooks.signal?.removeEventListener('abort', abortFromCaller);
  }

  let serialized: string | undefined;
  try {
    // No result is stored for `undefined`: a duplicate then replays `undefined`, not `null`.
    serialized =
      settings.serializer && result !== undefined
        ? settings.serializer.serialize(result)
        : undefined;
  } catch (thrown) {
    return recordFailure(toError(thrown), false);
  }
  return completeRecord(settings, fenced, serialized, result, attempt, fencingToken, recordFailure);
}

async function completeRecord<R>(
  settings: ExecuteSettings,
  fenced: { scope: string; requestId: string; token: string },
  serialized: string | undefined,
  result: R,
  attempt: number,
  fencingToken: number,
  recordFailure: (error: Error, retriable: boolean) => Promise<Execution<R>>,
): Promise<Execution<R>> {
  let lastError: Error | undefined;
  // The side effect has happened: a transient store error must not make it run again.
  for (let tryNumber = 1; tryNumber <= COMPLETE_TRIES; tryNumber++) {
    try {
      const outcome = await settings.store.complete({
        ...fenced,
        ttlMs: settings.completedTtlMs,
        ...(serialized === undefined ? {} : { result: serialized }),
      });
      if (outcome === 'lease-lost') return { kind: 'lease-lost', attempt };
      return { kind: 'processed', result, attempt, fencingToken };
    } catch (thrown) {
      if (isIdemqError(thrown) && thrown.code === ErrorCodes.RESULT_TOO_LARGE) {
        return recordFailure(thrown, false);
      }
      lastError = asStoreError(thrown);
      await new Promise((resolve) => setTimeout(resolve, 10 * tryNumber));
    }
  }
  return {
    kind: 'store-error',
    error: lastError ?? new StoreUnavailableError('complete failed'),
    attempt,
  };
}

/** Fail-open: run without a claim because the user chose availability over idempotency. */
async function runUnclaimed<R>(
  requestId: string,
  fn: (ctx: HandlerContext) => Promise<R> | R,
  hooks: ExecuteHooks,
  storeError: Error,
): Promise<Execution<R>> {
  const controller = new AbortController();
  const attempt = hooks.unclaimedAttempt ?? 1;
  const ctx: HandlerContext = {
    requestId,
    attempt,
    fencingToken: 0,
    signal: hooks.signal ?? controller.signal,
    // Unclaimed: no lease protects this run.
    leaseRemainingMs: () => 0,
  };
  try {
    return { kind: 'processed-unclaimed', result: await fn(ctx), attempt, storeError };
  } catch (thrown) {
    const error = toError(thrown);
    return { kind: 'failed', error, attempt, retriable: isRetriable(error) };
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
