import type { OptionsCheck } from '../options/optionsCheck.js';
import { IDEMPOTENCY_DEFAULTS, RETRY_DEFAULTS } from './defaults.js';
import type { ExecuteSettings } from './execute.js';
import { RenewalScheduler } from './leaseKeeper.js';
import { jsonSerializer } from './serializer.js';
import type { IdempotencyOptions } from './types.js';

const STORE_METHODS = [
  'claim',
  'claimMany',
  'complete',
  'fail',
  'renew',
  'release',
  'inspect',
  'close',
];
const DAY_MS = 24 * 60 * 60 * 1000;

/** Checks the idempotency options (every problem into `check`) and resolves their defaults. */
export function checkIdempotencyOptions(check: OptionsCheck, options: IdempotencyOptions): void {
  check
    .implements('store', options.store, STORE_METHODS)
    .text('scope', options.scope)
    .integer('leaseMs', options.leaseMs, 10, 12 * 60 * 60 * 1000)
    .integer('completedTtlMs', options.completedTtlMs, 1, 365 * DAY_MS)
    .integer('failedTtlMs', options.failedTtlMs, 1, 365 * DAY_MS)
    .oneOf('heartbeat', options.heartbeat, [true, false])
    .oneOf('onStoreError', options.onStoreError, ['retry', 'process'])
    .oneOf('storeResults', options.storeResults, [true, false])
    .integer('maxRequestIdBytes', options.maxRequestIdBytes, 1, 64 * 1024)
    .integer('inProgressRetryMaxDelayMs', options.inProgressRetryMaxDelayMs, 0);
  if (options.serializer !== undefined) {
    check.implements('serializer', options.serializer, ['serialize', 'deserialize']);
  }
  if (options.logger !== undefined) {
    check.implements('logger', options.logger, ['debug', 'info', 'warn', 'error']);
  }
}

/** The engine settings for validated options. */
export function resolveExecuteSettings(
  options: IdempotencyOptions,
  maxAttempts: number = RETRY_DEFAULTS.maxAttempts,
): ExecuteSettings {
  const storeResults = options.storeResults ?? IDEMPOTENCY_DEFAULTS.storeResults;
  return {
    store: options.store,
    scope: options.scope,
    leaseMs: options.leaseMs ?? IDEMPOTENCY_DEFAULTS.leaseMs,
    completedTtlMs: options.completedTtlMs ?? IDEMPOTENCY_DEFAULTS.completedTtlMs,
    failedTtlMs: options.failedTtlMs ?? IDEMPOTENCY_DEFAULTS.failedTtlMs,
    heartbeat: options.heartbeat ?? IDEMPOTENCY_DEFAULTS.heartbeat,
    onStoreError: options.onStoreError ?? IDEMPOTENCY_DEFAULTS.onStoreError,
    serializer: storeResults ? (options.serializer ?? jsonSerializer) : undefined,
    maxAttempts,
    renewals: new RenewalScheduler(options.store),
  };
}
