import { TransportClosedError } from '../errors/transport.js';
import { validateRequestId } from '../ids/requestId.js';
import { uuidv7 } from '../ids/uuidv7.js';
import { OptionsCheck } from '../options/OptionsCheck.js';
import { checkSubscribeRequest } from './checkSubscribeRequest.js';
import { encodeBody } from './encodeBody.js';
import {
  type BrokerSubscriber,
  type MemoryBroker,
  type MemoryQueueStats,
  memoryBroker,
  type QueuedMessage,
  toIncoming,
} from './memoryBroker.js';
import { settledDelivery } from './settleOnce.js';
import {
  type Capabilities,
  DeadLetterHeaders,
  type Health,
  type OutgoingMessage,
  type PublishReceipt,
  type SubscribeRequest,
  type Subscription,
  type Transport,
} from './Transport.js';

export interface MemoryTransportOptions {
  /** Share one broker between transports to model several connections. @default a new broker */
  broker?: MemoryBroker;
  /**
   * Visibility timeout: an unsettled delivery older than this is redelivered elsewhere and can
   * no longer be settled. Unset: deliveries are held until settled or the connection closes.
   */
  leaseMs?: number;
  /**
   * Dead letters of `q` go to `q + deadLetterSuffix`.
   * @default '.dlq'
   */
  deadLetterSuffix?: string;
}

export const MEMORY_TRANSPORT_DEFAULTS = Object.freeze({ deadLetterSuffix: '.dlq' });

export interface MemoryTransport extends Transport {
  readonly broker: MemoryBroker;
  /** Queue depth of one destination and group, like a broker's management API. */
  stats(destination: string, group?: string): MemoryQueueStats;
}

/**
 * An in-process transport that honours the whole transport contract: delayed retry, dead
 * letters, redelivery of unsettled deliveries on close, exact attempts, a concurrency bound.
 *
 * @example
 * const broker = memoryBroker();
 * const transport = memoryTransport({ broker });
 * await transport.publish('payments', { body: { amount: 10 } });
 */
export function memoryTransport(options: MemoryTransportOptions = {}): MemoryTransport {
  new OptionsCheck('memoryTransport')
    .integer('leaseMs', options.leaseMs, 1)
    .text('deadLetterSuffix', options.deadLetterSuffix, true)
    .done();
  const broker = options.broker ?? memoryBroker();
  const leaseMs = options.leaseMs;
  const deadLetterSuffix = options.deadLetterSuffix ?? MEMORY_TRANSPORT_DEFAULTS.deadLetterSuffix;
  const connections = new Set<MemorySubscription>();
  let closed = false;

  const capabilities: Capabilities = Object.freeze({
    redeliveryCounter: 'exact',
    nativeDelay: { maxMs: 2 ** 31 - 1 },
    deadLetter: 'native',
    orderingScope: 'queue',
    nackBlocksKey: false,
    leaseExtension: leaseMs === undefined ? false : { maxTotalMs: Number.POSITIVE_INFINITY },
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: null,
    replayForNewGroup: false,
    releaseCountsAttempt: false,
    consumerGroups: true,
    publishDedup: false,
  });

  function assertOpen(): void {
    if (closed) throw new TransportClosedError('memory');
  }

  const transport: MemoryTransport = {
    name: 'memory',
    capabilities,
    broker,

    async publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt> {
      assertOpen();
      const requestId =
        message.requestId === undefined ? uuidv7() : validateRequestId(message.requestId);
      const { bytes, contentType } = encodeBody(message);
      broker.publish({
        requestId,
        body: bytes,
        headers: { ...message.headers },
        destination,
        publishedAt: Date.now(),
        ...(message.key === undefined ? {} : { key: message.key }),
        ...(contentType === undefined ? {} : { contentType }),
      });
      return { requestId };
    },

    async subscribe(request: SubscribeRequest): Promise<Subscription> {
      assertOpen();
      checkSubscribeRequest(request);
      const subscription = new MemorySubscription(broker, request, {
        leaseMs,
        deadLetterDestination: request.source + deadLetterSuffix,
        onClosed: (s) => connections.delete(s),
      });
      connections.add(subscription);
      subscription.open();
      return subscription;
    },

    stats(destination, group) {
      return broker.stats(destination, group);
    },

    async close() {
      if (closed) return;
      closed = true;
      // A dropped connection: the broker takes back every unsettled delivery, counted as tried.
      for (const subscription of [...connections]) subscription.drop('crash');
    },
  };
  return transport;
}

interface SubscriptionSettings {
  leaseMs: number | undefined;
  deadLetterDestination: string;
  onClosed: (subscription: MemorySubscription) => void;
}

/** One subscriber: tracks its unsettled deliveries so a close can give them back. */
class MemorySubscription implements Subscription, BrokerSubscriber {
  readonly maxInFlight: number;
  inFlight = 0;
  fetching = true;
  private readonly group: string;
  private readonly unsettled = new Map<QueuedMessage, (countAttempt: boolean) => void>();
  private ended = false;
  /**
   * Keeps the process alive while the subscription is open, as a broker connection's socket
   * does: its own timers (retry delays, leases) do not, so that a closed one holds nothing.
   */
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly broker: MemoryBroker,
    private readonly request: SubscribeRequest,
    private readonly settings: SubscriptionSettings,
  ) {
    this.maxInFlight = request.maxInFlight;
    this.group = request.group ?? 'default';
  }

  open(): void {
    this.keepAlive = setInterval(() => undefined, 1 << 30);
    this.broker.attach(this.request.source, this.group, this);
  }

  deliver(queued: QueuedMessage): void {
    queued.attempts += 1;
    const { source } = this.request;
    const { leaseMs } = this.settings;
    let valid = true;
    let leaseTimer: NodeJS.Timeout | undefined;

    /** Ends this delivery; `requeue` decides what the broker does with the message. */
    const finish = (requeue: () => void) => {
      if (!valid) return;
      valid = false;
      if (leaseTimer) clearTimeout(leaseTimer);
      this.unsettled.delete(queued);
      this.broker.settled(source, this.group, this);
      requeue();
      this.broker.dispatch(source, this.group);
    };
    const giveBack = (countAttempt: boolean) => () => {
      queued.redelivered = true;
      if (!countAttempt) queued.attempts -= 1;
      this.broker.requeue(source, this.group, queued);
    };
    const armLease = (ms: number) => {
      if (leaseTimer) clearTimeout(leaseTimer);
      // Lease lapsed: like an SQS visibility timeout, the message becomes visible again.
      leaseTimer = setTimeout(() => finish(giveBack(true)), ms);
      leaseTimer.unref();
    };
    if (leaseMs !== undefined) armLease(leaseMs);
    this.unsettled.set(queued, (countAttempt) => finish(giveBack(countAttempt)));

    const delivery = settledDelivery(toIncoming(queued, source), {
      isValid: () => valid,
      ack: async () => finish(() => {}),
      retry: async ({ delayMs }) =>
        finish(() => {
          queued.redelivered = true;
          this.broker.requeue(source, this.group, queued, delayMs ?? 0);
        }),
      reject: async ({ reason, code, attempts }) =>
        finish(() => {
          const { stored } = queued;
          this.broker.publish({
            ...stored,
            destination: this.settings.deadLetterDestination,
            headers: {
              ...stored.headers,
              [DeadLetterHeaders.reason]: reason,
              ...(code === undefined ? {} : { [DeadLetterHeaders.code]: code }),
              [DeadLetterHeaders.attempts]: String(attempts ?? queued.attempts),
              [DeadLetterHeaders.source]: source,
            },
          });
        }),
      release: async () => finish(giveBack(false)),
      extendLease: async (ms) => {
        if (leaseMs !== undefined) armLease(ms);
      },
    });

    // Deliver on a later tick, as a network would: never re-enter the caller's stack.
    queueMicrotask(() => this.request.onDelivery(delivery));
  }

  async stop(): Promise<void> {
    this.fetching = false;
  }

  async close(): Promise<void> {
    this.drop('release');
  }

  health(): Health {
    if (this.ended) return { status: 'down', reason: 'closed' };
    if (!this.fetching) return { status: 'down', reason: 'stopped' };
    return { status: 'up' };
  }

  /** Detaches and gives unsettled deliveries back: free on a clean close, counted on a crash. */
  drop(how: 'release' | 'crash'): void {
    if (this.ended) return;
    this.ended = true;
    this.fetching = false;
    clearInterval(this.keepAlive);
    this.broker.detach(this.request.source, this.group, this);
    for (const giveBackNow of [...this.unsettled.values()]) giveBackNow(how === 'crash');
    this.settings.onClosed(this);
  }
}
