import { ErrorCodes } from '../errors/codes.js';
import { isIdemqError } from '../errors/idemqError.js';
import { InvalidRequestIdError } from '../errors/message.js';
import { StoreUnavailableError } from '../errors/store.js';
import { validateRequestId } from '../ids/requestId.js';
import { EventHub } from '../observability/events.js';
import { silentLogger } from '../observability/logger.js';
import { OptionsCheck } from '../options/optionsCheck.js';
import { IDEMPOTENCY_DEFAULTS } from './defaults.js';
import { execute } from './execute.js';
import { checkIdempotencyOptions, resolveExecuteSettings } from './resolveSettings.js';
import type { HandlerContext, IdempotencyOptions, RunOptions, RunOutcome } from './types.js';

export interface Idempotency {
  /**
   * Runs `fn` at most once to completion per requestId in this scope.
   *
   * Resolves `processed` (fn ran and its completion is recorded), `duplicate` (already
   * completed at `completedAt`: fn not run; the stored result if any, or `resultOmitted` when it
   * could not be stored), `in-progress` (another owner holds the lease; `retryAfterMs` is the
   * time left on it, at most `inProgressRetryMaxDelayMs`), `key-reuse` (same id, different
   * payload) or `lease-lost` (fn ran but another owner took over: its outcome is not recorded;
   * `result` is fn's when it returned). Rejects with fn's own error after recording the failure
   * (or, when `options.signal` had aborted, after releasing the claim: see `onAbort`), with a
   * typed error for a bad requestId (`InvalidRequestIdError`), a bad `options.scope`
   * (`InvalidOptionsError`) or a payload that cannot be fingerprinted
   * (`PayloadNotFingerprintableError`), with `StoreUnavailableError` when the store is down
   * (unless `onStoreError: 'process'`), and with `StoreRejectedError` when the store refuses
   * the operation (`affects: 'record'`: fn is not run, fail-open or not).
   */
  run<R>(
    requestId: string,
    fn: (ctx: HandlerContext) => Promise<R> | R,
    options?: RunOptions,
  ): Promise<RunOutcome<R>>;
}

/**
 * Idempotency for code that keeps its own consumer loop or HTTP route.
 *
 * @example
 * const idem = createIdempotency({ store: memoryStore(), scope: 'billing' });
 * const outcome = await idem.run(requestId, (ctx) => charge(body, ctx.signal), { payload: body });
 * if (outcome.status === 'in-progress') res.status(409).end();
 */
export function createIdempotency(options: IdempotencyOptions): Idempotency {
  const check = new OptionsCheck('createIdempotency');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  checkIdempotencyOptions(check, options);
  check.done();
  const settings = resolveExecuteSettings(options, Number.POSITIVE_INFINITY);
  const maxRequestIdBytes = options.maxRequestIdBytes ?? IDEMPOTENCY_DEFAULTS.maxRequestIdBytes;
  const inProgressRetryMaxDelayMs =
    options.inProgressRetryMaxDelayMs ?? IDEMPOTENCY_DEFAULTS.inProgressRetryMaxDelayMs;
  const logger = options.logger ?? silentLogger;
  if (settings.onStoreError === 'process') {
    logger.warn(
      { scope: options.scope },
      'idemq: onStoreError "process" runs handlers unclaimed when the store is down',
    );
  }

  // No listeners here: the events reach telemetry through node:diagnostics_channel only.
  const events = new EventHub();

  return {
    async run(requestId, fn, runOptions = {}) {
      checkKey(requestId, maxRequestIdBytes);
      const scope = runOptions.scope ?? settings.scope;
      // A front passes a scope on every call: a valid one skips building the check.
      const scopeValid = runOptions.scope === undefined || isNonEmptyText(runOptions.scope);
      if (!scopeValid || runOptions.onAbort !== undefined) checkRunOptions(runOptions);
      const execution = await execute(settings, requestId, fn, runOptions);
      switch (execution.kind) {
        case 'processed': {
          const { result, attempt, fencingToken, unstored } = execution;
          if (!unstored) return { status: 'processed', result, attempt, fencingToken };
          const { reason, error } = unstored;
          logger.warn(
            { requestId, scope, reason, code: error.code },
            'idemq: result not stored; the record is completed without it',
          );
          events.emit('result-omitted', {
            requestId,
            scope,
            source: undefined,
            reason,
            error,
          });
          return { status: 'processed', result, attempt, fencingToken, resultOmitted: reason };
        }
        case 'processed-unclaimed':
          logger.warn({ requestId }, 'idemq: store unavailable, ran without a claim');
          return { status: 'processed', result: execution.result, attempt: 1, fencingToken: 0 };
        case 'duplicate': {
          const { completedAt } = execution;
          if ('result' in execution) {
            return { status: 'duplicate', result: execution.result, completedAt };
          }
          return execution.resultOmitted === undefined
            ? { status: 'duplicate', completedAt }
            : { status: 'duplicate', resultOmitted: execution.resultOmitted, completedAt };
        }
        case 'in-progress':
          return {
            status: 'in-progress',
            retryAfterMs: Math.min(execution.retryAfterMs, inProgressRetryMaxDelayMs),
            attempt: execution.attempt,
          };
        case 'key-reuse':
          return { status: 'key-reuse' };
        case 'lease-lost':
          return 'result' in execution
            ? { status: 'lease-lost', attempt: execution.attempt, result: execution.result }
            : { status: 'lease-lost', attempt: execution.attempt };
        case 'failed':
        case 'abandoned':
          throw execution.error;
        case 'exhausted':
          throw new Error(`unreachable: run() never yields ${execution.kind}`);
        case 'store-error':
          throw isIdemqError(execution.error)
            ? execution.error
            : new StoreUnavailableError(execution.error.message, { cause: execution.error });
      }
    },
  };
}

/** The per-call options that change where and how the record is kept, checked like the fixed ones. */
function isNonEmptyText(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function checkRunOptions(runOptions: RunOptions): void {
  new OptionsCheck('run')
    .text('scope', runOptions.scope, true)
    .oneOf('onAbort', runOptions.onAbort, ['release', 'fail'])
    .done();
}

/** The requestId check, worded for a route author: a missing key is theirs, not a message's. */
function checkKey(requestId: unknown, maxBytes: number): void {
  try {
    validateRequestId(requestId, maxBytes);
  } catch (error) {
    if (error instanceof InvalidRequestIdError && error.code === ErrorCodes.REQUEST_ID_MISSING) {
      const got = typeof requestId === 'string' ? JSON.stringify(requestId) : String(requestId);
      throw new InvalidRequestIdError(
        ErrorCodes.REQUEST_ID_MISSING,
        `run() needs an idempotency key (requestId); got ${got}`,
      );
    }
    throw error;
  }
}
