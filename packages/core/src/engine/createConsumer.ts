import { type ErrorCode, ErrorCodes } from '../errors/codes.js';
import { toError } from '../errors/handler.js';
import { isIdemqError } from '../errors/IdemqError.js';
import { ConsumerStateError } from '../errors/usage.js';
import { type ConsumerEventName, type ConsumerEvents, EventHub } from '../observability/events.js';
import { silentLogger } from '../observability/logger.js';
import { OptionsCheck } from '../options/OptionsCheck.js';
import type { Delivery, Health, Subscription } from '../transport/Transport.js';
import { Abandonment } from './abandonment.js';
import { decide } from './decide.js';
import { CONSUMER_DEFAULTS, IDEMPOTENCY_DEFAULTS, RETRY_DEFAULTS } from './defaults.js';
import { type Execution, execute } from './execute.js';
import { readPayload, readRequestId } from './readMessage.js';
import { checkIdempotencyOptions, resolveExecuteSettings } from './resolveSettings.js';
import type { ConsumedMessage, ConsumerOptions, RetryPolicy } from './types.js';

export interface Consumer {
  /** Subscribes and starts processing. Rejects when already running. */
  start(): Promise<void>;
  /**
   * Graceful stop: no new deliveries; waits up to `timeoutMs` (default `drainTimeoutMs`) for
   * running handlers, then aborts their `ctx.signal` and gives their messages back to the broker.
   * Idempotent.
   */
  stop(options?: { timeoutMs?: number }): Promise<StopReport>;
  /** `stop()` with the default timeout. The transport and store stay open: they are yours. */
  close(): Promise<void>;
  on<E extends ConsumerEventName>(
    event: E,
    listener: (payload: ConsumerEvents[E]) => void,
  ): () => void;
  /**
   * For readiness and liveness probes: `up` while consuming; `degraded` while starting, or while
   * the transport reconnects or rebalances by itself; `down` when not started, stopping or
   * stopped, or when the subscription failed for good. No network call.
   */
  health(): Health;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StopReport {
  /** Every running handler finished within the timeout. */
  drained: boolean;
  /** Handlers still running at the timeout, whose messages were given back. */
  abandoned: number;
}

/**
 * An idempotent consumer: every message's handler runs to completion at most once per
 * (scope, requestId), whatever the transport redelivers.
 *
 * @example
 * const consumer = createConsumer({
 *   transport: memoryTransport(),
 *   store: memoryStore(),
 *   source: 'payments',
 *   scope: 'billing',
 *   handler: async (message, ctx) => charge(message.value, { signal: ctx.signal }),
 * });
 * await consumer.start();
 */
export function createConsumer<T = unknown, R = unknown>(options: ConsumerOptions<T, R>): Consumer {
  validateConsumerOptions(options);
  const retryPolicy: Required<RetryPolicy> = { ...RETRY_DEFAULTS, ...definedOnly(options.retry) };
  const settings = resolveExecuteSettings(options, retryPolicy.maxAttempts);
  const { transport, source, handler } = options;
  const group = options.group ?? CONSUMER_DEFAULTS.group;
  const concurrency = options.concurrency ?? CONSUMER_DEFAULTS.concurrency;
  const decisionPolicy = {
    retry: retryPolicy,
    storeErrorRetryDelayMs:
      options.storeErrorRetryDelayMs ?? CONSUMER_DEFAULTS.storeErrorRetryDelayMs,
    inProgressRetryMaxDelayMs:
      options.inProgressRetryMaxDelayMs ?? CONSUMER_DEFAULTS.inProgressRetryMaxDelayMs,
  };
  const drainTimeoutMs = options.drainTimeoutMs ?? CONSUMER_DEFAULTS.drainTimeoutMs;
  const maxRequestIdBytes = options.maxRequestIdBytes ?? IDEMPOTENCY_DEFAULTS.maxRequestIdBytes;
  const logger = options.logger ?? silentLogger;
  const events = new EventHub();
  if (settings.onStoreError === 'process') {
    logger.warn(
      { source, scope: options.scope },
      'idemq: onStoreError "process" runs handlers unclaimed when the store is down',
    );
  }

  let state: 'idle' | 'running' | 'stopping' = 'idle';
  let subscription: Subscription | undefined;
  /** Stopped at least once (for health's reason). */
  let stopped = false;
  /** The subscribe call of `start()`, which a concurrent `stop()` must wait for. */
  let starting: Promise<unknown> | undefined;
  let stopping: Promise<StopReport> | undefined;
  /** Running handlers, with the switch that abandons them when a drain times out. */
  const inFlight = new Map<Promise<void>, Abandonment>();

  /** Settles; false when the delivery could no longer be settled (lease or connection gone). */
  async function settle(verb: () => Promise<boolean>): Promise<boolean> {
    try {
      return await verb();
    } catch (thrown) {
      // The broker connection is gone: it redelivers unsettled messages by itself.
      events.emit('error', { source, error: toError(thrown) });
      return false;
    }
  }

  /** Dead-letters; the event fires only when the message really went to the dead letters. */
  async function reject(
    delivery: Delivery,
    requestId: string | undefined,
    cause: { reason: string; code: string },
    attempt: number | undefined,
  ): Promise<void> {
    const rejected = await settle(() =>
      delivery.reject({ ...cause, ...(attempt === undefined ? {} : { attempts: attempt }) }),
    );
    if (rejected) events.emit('dead-letter', { requestId, source, attempt, ...cause });
  }

  async function handle(delivery: Delivery, abandon: Abandonment): Promise<void> {
    const { message } = delivery;
    let requestId: string;
    let value: T;
    try {
      requestId = readRequestId(message, maxRequestIdBytes, options.deriveRequestId);
    } catch (thrown) {
      return reject(delivery, undefined, causeOf(thrown, ErrorCodes.REQUEST_ID_INVALID), undefined);
    }
    try {
      const read = readPayload(message, options.decode, options.schema);
      // Awaited only when a schema validates asynchronously: an await is a microtask turn.
      value = read instanceof Promise ? await read : (read as T);
    } catch (thrown) {
      return reject(delivery, requestId, causeOf(thrown, ErrorCodes.PAYLOAD_MALFORMED), undefined);
    }

    const consumed: ConsumedMessage<T> = {
      requestId,
      value,
      body: message.body,
      headers: message.headers,
      source: message.source,
      deliveryAttempt: message.attempt,
      redelivered: message.redelivered,
      raw: message.raw,
      ...(message.key === undefined ? {} : { key: message.key }),
    };
    const startedAt = performance.now();
    let brokerLeaseLost = false;
    const execution: Execution<R> = await execute(
      settings,
      requestId,
      (ctx) => handler(consumed, ctx),
      {
        payload: message.body,
        abandon,
        unclaimedAttempt: message.attempt,
        onLeaseRenewed: async (leaseMs) => {
          events.emit('lease-extended', { requestId, source, leaseMs });
          const extended = await delivery.extendLease(leaseMs).catch(() => false);
          // The broker no longer holds the message for us (an SQS receipt handle gone, a lapsed
          // visibility): another consumer may have it. The store claim still fences the work,
          // so the handler goes on; its redelivered copy will be a duplicate.
          if (!extended && !delivery.settled && !brokerLeaseLost) {
            brokerLeaseLost = true;
            events.emit('lease-lost', {
              requestId,
              source,
              attempt: message.attempt,
              lease: 'broker',
            });
          }
        },
      },
    );
    const durationMs = performance.now() - startedAt;
    if (execution.kind === 'store-error' || execution.kind === 'processed-unclaimed') {
      const error = execution.kind === 'store-error' ? execution.error : execution.storeError;
      events.emit('store-error', { requestId, source, error });
    }

    const decision = decide(execution, decisionPolicy);
    switch (decision.verb) {
      case 'ack':
        // The record is what counts: even when the ack no longer lands, the redelivery will be
        // a duplicate, so `processed` / `duplicate` report the record, not the ack.
        await settle(() => delivery.ack());
        if (decision.event === 'processed') {
          const attempt =
            execution.kind === 'processed' || execution.kind === 'processed-unclaimed'
              ? execution.attempt
              : 1;
          events.emit('processed', { requestId, source, attempt, durationMs });
        } else {
          events.emit('duplicate', { requestId, source });
        }
        return;
      case 'retry':
        if (!(await settle(() => delivery.retry({ delayMs: decision.delayMs })))) return;
        if (decision.event === 'in-progress') {
          events.emit('in-progress', { requestId, source, retryAfterMs: decision.delayMs });
        } else if (decision.event === 'retry' && execution.kind === 'failed') {
          events.emit('retry', {
            requestId,
            source,
            attempt: execution.attempt,
            delayMs: decision.delayMs,
            error: execution.error,
          });
        }
        return;
      case 'reject':
        return reject(delivery, requestId, decision, decision.attempt);
      case 'release':
        await settle(() => delivery.release());
        if (decision.event === 'lease-lost' && execution.kind === 'lease-lost') {
          events.emit('lease-lost', {
            requestId,
            source,
            attempt: execution.attempt,
            lease: 'store',
          });
        }
        return;
    }
  }

  /**
   * Deliveries waiting for a handler slot. The transport's prefetch normally keeps this empty,
   * but a broker whose lease lapsed mid-handler frees the slot and delivers again: the consumer
   * still never runs more than `concurrency` handlers.
   */
  const waiting: Delivery[] = [];

  function onDelivery(delivery: Delivery): void {
    if (state !== 'running') {
      // Stopping: give it back untouched, for free, rather than start new work.
      void settle(() => delivery.release());
      return;
    }
    if (inFlight.size >= concurrency) {
      waiting.push(delivery);
      return;
    }
    run(delivery);
  }

  function run(delivery: Delivery): void {
    const abandon = new Abandonment();
    const work = handle(delivery, abandon)
      .catch((thrown) => {
        // A bug in a hook or decoder must not lose the message: give it back.
        events.emit('error', { source, error: toError(thrown) });
        return settle(() => delivery.release()).then(() => undefined);
      })
      .finally(() => {
        inFlight.delete(work);
        const next = waiting.shift();
        if (next) onDelivery(next);
      });
    inFlight.set(work, abandon);
  }

  async function drain(timeoutMs: number): Promise<StopReport> {
    // Stop fetching before any await, so nothing published from here on is started.
    const stopFetching = subscription?.stop();
    await starting?.catch(() => undefined);
    await stopFetching;
    await subscription?.stop();
    for (const delivery of waiting.splice(0)) await settle(() => delivery.release());
    const running = [...inFlight.keys()];
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled(running).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    const abandoned = timedOut ? inFlight.size : 0;
    if (timedOut) {
      for (const abandon of inFlight.values()) {
        abandon.abort(new ConsumerStateError('consumer stopped before the handler finished'));
      }
    }
    // Whatever is still unsettled goes back to the broker, free of an attempt.
    await subscription?.close();
    subscription = undefined;
    state = 'idle';
    stopped = true;
    return { drained: !timedOut, abandoned };
  }

  const consumer: Consumer = {
    async start() {
      if (state !== 'idle') throw new ConsumerStateError(`consumer is ${state}, cannot start`);
      state = 'running';
      stopping = undefined;
      const subscribing = transport.subscribe({
        source,
        group,
        maxInFlight: concurrency,
        onDelivery,
        onError: (error) => events.emit('error', { source, error }),
      });
      starting = subscribing;
      try {
        subscription = await subscribing;
      } catch (error) {
        state = 'idle';
        throw error;
      } finally {
        starting = undefined;
      }
    },

    stop(stopOptions = {}) {
      if (state === 'idle') return stopping ?? Promise.resolve({ drained: true, abandoned: 0 });
      if (state === 'running') {
        state = 'stopping';
        stopping = drain(stopOptions.timeoutMs ?? drainTimeoutMs);
      }
      return stopping as Promise<StopReport>;
    },

    async close() {
      await consumer.stop();
    },

    on(event, listener) {
      return events.on(event, listener);
    },

    health() {
      if (state === 'stopping') return { status: 'down', reason: 'stopping' };
      if (state === 'idle') return { status: 'down', reason: stopped ? 'stopped' : 'not started' };
      return subscription?.health() ?? { status: 'degraded', reason: 'starting' };
    },

    async [Symbol.asyncDispose]() {
      await consumer.stop();
    },
  };
  return consumer;
}

function validateConsumerOptions<T, R>(options: ConsumerOptions<T, R>): void {
  const check = new OptionsCheck('createConsumer');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  checkIdempotencyOptions(check, options);
  check
    .implements('transport', options.transport, ['subscribe', 'publish', 'close'])
    .text('source', options.source)
    .text('group', options.group, true)
    .fn('handler', options.handler)
    .integer('concurrency', options.concurrency, 1, 10_000)
    .fn('decode', options.decode, true)
    .fn('deriveRequestId', options.deriveRequestId, true)
    .integer('storeErrorRetryDelayMs', options.storeErrorRetryDelayMs, 0)
    .integer('inProgressRetryMaxDelayMs', options.inProgressRetryMaxDelayMs, 0)
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

/** The reason and code a dead letter carries for a thrown error. */
function causeOf(thrown: unknown, fallbackCode: ErrorCode): { reason: string; code: string } {
  const error = toError(thrown);
  return { reason: error.message, code: isIdemqError(error) ? error.code : fallbackCode };
}

function definedOnly<O extends object>(value: O | undefined): Partial<O> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<O>;
}
