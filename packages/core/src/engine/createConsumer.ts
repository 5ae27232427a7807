import { type ConsumerEventName, type ConsumerEvents, EventHub } from '../observability/events.js';
import { silentLogger } from '../observability/logger.js';
import type { Health } from '../transport/transport.js';
import { ConsumerLifecycle } from './consumerLifecycle.js';
import { definedOnly, validateConsumerOptions } from './consumerOptions.js';
import { CONSUMER_DEFAULTS, IDEMPOTENCY_DEFAULTS, RETRY_DEFAULTS } from './defaults.js';
import { DeliverySettler } from './deliverySettler.js';
import { Dispatcher, type StopReport } from './dispatch.js';
import { processDelivery } from './processDelivery.js';
import { resolveExecuteSettings } from './resolveSettings.js';
import type { ConsumerOptions, RetryPolicy } from './types.js';

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

/**
 * An idempotent consumer: every message's handler runs to completion at most once per
 * (scope, requestId), whatever the transport redelivers.
 *
 * Three parts, each in its own module: the dispatch (`Dispatcher`: deliveries in, at most
 * `concurrency` at once), the decision-and-settle step (`processDelivery`: claim, run, record,
 * decide, settle) and the lifecycle (`ConsumerLifecycle`: start, drain, stop, health).
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
  const { source } = options;
  const concurrency = options.concurrency ?? CONSUMER_DEFAULTS.concurrency;
  const logger = options.logger ?? silentLogger;
  const events = new EventHub();
  if (settings.onStoreError === 'process') {
    logger.warn(
      { source, scope: options.scope },
      'idemq: onStoreError "process" runs handlers unclaimed when the store is down',
    );
  }

  const settler = new DeliverySettler(events, source);
  const process = processDelivery({
    options,
    settings,
    decisionPolicy: {
      retry: retryPolicy,
      storeErrorRetryDelayMs:
        options.storeErrorRetryDelayMs ?? CONSUMER_DEFAULTS.storeErrorRetryDelayMs,
      inProgressRetryMaxDelayMs:
        options.inProgressRetryMaxDelayMs ?? IDEMPOTENCY_DEFAULTS.inProgressRetryMaxDelayMs,
    },
    maxRequestIdBytes: options.maxRequestIdBytes ?? IDEMPOTENCY_DEFAULTS.maxRequestIdBytes,
    maxPayloadBytes:
      options.maxPayloadBytes ?? options.transport.capabilities?.maxPayloadBytes ?? undefined,
    source,
    events,
    settler,
  });
  const dispatcher = new Dispatcher({ concurrency, process, settler, events, source });
  const lifecycle = new ConsumerLifecycle({
    transport: options.transport,
    source,
    group: options.group ?? CONSUMER_DEFAULTS.group,
    maxInFlight: concurrency,
    drainTimeoutMs: options.drainTimeoutMs ?? CONSUMER_DEFAULTS.drainTimeoutMs,
    dispatcher,
    events,
  });

  const consumer: Consumer = {
    start: () => lifecycle.start(),
    stop: (stopOptions = {}) => lifecycle.stop(stopOptions.timeoutMs),
    async close() {
      await lifecycle.stop();
    },
    on: (event, listener) => events.on(event, listener),
    health: () => lifecycle.health(),
    async [Symbol.asyncDispose]() {
      await lifecycle.stop();
    },
  };
  return consumer;
}
