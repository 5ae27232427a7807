import { OptionsCheck } from '../options/optionsCheck.js';
import { RETRY_DEFAULTS } from './defaults.js';
import { checkIdempotencyOptions } from './resolveSettings.js';
import type { ConsumerOptions } from './types.js';

/** Refuses every bad option of `createConsumer` in one `InvalidOptionsError`. */
export function validateConsumerOptions<T, R>(options: ConsumerOptions<T, R>): void {
  const check = new OptionsCheck('createConsumer');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  checkIdempotencyOptions(check, options);
  check
    .implements('transport', options.transport, ['subscribe', 'publish', 'close'])
    .text('source', options.source)
    .text('group', options.group, true)
    .fn('handler', options.handler, options.batchHandler !== undefined)
    .fn('batchHandler', options.batchHandler, true)
    .expect(
      options.handler === undefined || options.batchHandler === undefined,
      'give either handler or batchHandler, not both',
    )
    .integer('concurrency', options.concurrency, 1, 10_000)
    .integer('maxPayloadBytes', options.maxPayloadBytes, 1)
    .fn('decode', options.decode, true)
    .fn('deriveRequestId', options.deriveRequestId, true)
    .oneOf('requestIdFrom', options.requestIdFrom, ['transport', 'cloudevents'])
    .integer('storeErrorRetryDelayMs', options.storeErrorRetryDelayMs, 0)
    .integer('drainTimeoutMs', options.drainTimeoutMs, 0);
  if (options.schema !== undefined) {
    check.expect(
      typeof options.schema?.['~standard']?.validate === 'function',
      'schema must be a Standard Schema validator (with ~standard.validate)',
    );
  }
  const retry = options.retry;
  if (retry !== undefined) {
    check
      .integer('retry.maxAttempts', retry.maxAttempts, 1, 1_000)
      .integer('retry.baseDelayMs', retry.baseDelayMs, 0)
      .integer('retry.maxDelayMs', retry.maxDelayMs, 0)
      .oneOf('retry.jitter', retry.jitter, ['full', 'none'])
      .expect(
        (retry.baseDelayMs ?? RETRY_DEFAULTS.baseDelayMs) <=
          (retry.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs),
        'retry.baseDelayMs must not exceed retry.maxDelayMs',
      );
  }
  checkDelaysFitTransport(check, options);
  check.done();
}

/**
 * Every delay the engine may ask of the transport must be one it can honour (SQS: 12 h of
 * visibility): refused here, once, rather than by a retry hours into production.
 */
function checkDelaysFitTransport<T, R>(check: OptionsCheck, options: ConsumerOptions<T, R>): void {
  const nativeDelay = options.transport?.capabilities?.nativeDelay;
  if (typeof nativeDelay !== 'object' || nativeDelay === null) return;
  const delays: Array<[string, unknown]> = [
    ['retry.maxDelayMs', options.retry?.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs],
    ['storeErrorRetryDelayMs', options.storeErrorRetryDelayMs],
    ['inProgressRetryMaxDelayMs', options.inProgressRetryMaxDelayMs],
  ];
  for (const [name, delayMs] of delays) {
    if (typeof delayMs !== 'number') continue;
    check.expect(
      delayMs <= nativeDelay.maxMs,
      `${name} (${delayMs} ms) is longer than transport ${options.transport.name} can delay a message (${nativeDelay.maxMs} ms)`,
    );
  }
}

/** The fields of `value` that are not `undefined`, so they can be spread over defaults. */
export function definedOnly<O extends object>(value: O | undefined): Partial<O> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<O>;
}
