import { TransportClosedError } from '../errors/transport.js';
import { validateRequestId } from '../ids/requestId.js';
import { uuidv7 } from '../ids/uuidv7.js';
import { OptionsCheck } from '../options/optionsCheck.js';
import { checkSubscribeRequest } from './checkSubscribeRequest.js';
import { deadLetterHeaders } from './deadLetterHeaders.js';
import { encodeBody } from './encodeBody.js';
import {
  type BrokerSubscriber,
  type MemoryBroker,
  type MemoryQueueStats,
  memoryBroker,
  type QueuedMessage,
  toIncoming,
} from './memoryBroker.js';
import { OnceSettlement } from './onceSettlement.js';
import type {
  Capabilities,
  Delivery,
  Health,
  IncomingMessage,
  OutgoingMessage,
  PublishReceipt,
  RejectOptions,
  RetryOptions,
  SubscribeRequest,
  Subscription,
  Transport,
} from './transport.js';

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
  readonly source: string;
  readonly group: string;
  private readonly unsettled = new Set<MemoryDelivery>();
  private ended = false;
  /**
   * Keeps the process alive while the subscription is open, as a broker connection's socket
   * does: its own timers (retry delays, leases) do not, so that a closed one holds nothing.
   */
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly broker: MemoryBroker,
    private readonly request: SubscribeRequest,
    readonly settings: SubscriptionSettings,
  ) {
    this.maxInFlight = request.maxInFlight;
    this.source = request.source;
    this.group = request.group ?? 'default';
  }

  open(): void {
    this.keepAlive = setInterval(() => undefined, 1 << 30);
    this.broker.attach(this.request.source, this.group, this);
  }

  deliver(queued: QueuedMessage): void {
    queued.attempts += 1;
    const delivery = new MemoryDelivery(queued, this);
    this.unsettled.add(delivery);
    // Deliver on a later tick, as a network would: never re-enter the caller's stack.
    queueMicrotask(() => this.request.onDelivery(delivery));
  }

  /** `delivery` is done: frees its slot, lets `requeue` place the message, hands out the next. */
  finished(delivery: MemoryDelivery, requeue: () => void): void {
    this.unsettled.delete(delivery);
    this.broker.settled(this.source, this.group, this);
    requeue();
    this.broker.dispatch(this.source, this.group);
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
    for (const delivery of [...this.unsettled]) delivery.takeBack(how === 'crash');
    this.settings.onClosed(this);
  }
}

/** One delivery: its verbs settle it once, through core's `OnceSettlement`, as every adapter's. */
class MemoryDelivery extends OnceSettlement implements Delivery {
  readonly message: IncomingMessage;
  private valid = true;
  private leaseTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly queued: QueuedMessage,
    private readonly owner: MemorySubscription,
  ) {
    super();
    this.message = toIncoming(queued, owner.source);
    const { leaseMs } = owner.settings;
    if (leaseMs !== undefined) this.armLease(leaseMs);
  }

  /** Gives the message back unsettled, as a lost connection does: counted as tried on a crash. */
  takeBack(countAttempt: boolean): void {
    this.finish(() => this.giveBack(countAttempt));
  }

  protected isValid(): boolean {
    return this.valid;
  }

  protected async brokerAck(): Promise<boolean> {
    this.finish(() => {});
    return true;
  }

  protected async brokerRetry({ delayMs }: RetryOptions): Promise<boolean> {
    this.finish(() => {
      this.queued.redelivered = true;
      this.owner.broker.requeue(this.owner.source, this.owner.group, this.queued, delayMs ?? 0);
    });
    return true;
  }

  protected async brokerReject(options: RejectOptions): Promise<boolean> {
    this.finish(() => {
      const { stored, attempts } = this.queued;
      const { source } = this.owner;
      this.owner.broker.publish({
        ...stored,
        destination: this.owner.settings.deadLetterDestination,
        headers: { ...stored.headers, ...deadLetterHeaders(options, { source, attempts }) },
      });
    });
    return true;
  }

  protected async brokerRelease(): Promise<boolean> {
    this.finish(() => this.giveBack(false));
    return true;
  }

  protected async brokerExtendLease(ms: number): Promise<boolean> {
    if (this.owner.settings.leaseMs !== undefined) this.armLease(ms);
    return true;
  }

  /** Ends this delivery once; `requeue` decides what the broker does with the message. */
  private finish(requeue: () => void): void {
    if (!this.valid) return;
    this.valid = false;
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.owner.finished(this, requeue);
  }

  private giveBack(countAttempt: boolean): void {
    this.queued.redelivered = true;
    if (!countAttempt) this.queued.attempts -= 1;
    this.owner.broker.requeue(this.owner.source, this.owner.group, this.queued);
  }

  private armLease(ms: number): void {
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    // Lease lapsed: like an SQS visibility timeout, the message becomes visible again.
    this.leaseTimer = setTimeout(() => this.takeBack(true), ms);
    this.leaseTimer.unref();
  }
}
