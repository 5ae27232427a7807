import {
  type BatchHandler,
  type Capabilities,
  type Consumer,
  type ConsumerSettings,
  createConsumer,
  type Delivery,
  type Handler,
  memoryStore,
  type Store,
  type Subscription,
  type Transport,
  uuidv7,
} from '@idemq/core';
import { expect } from 'vitest';
import type { ResolvedTransportTiming, TransportHarness } from '../harness.js';
import { uniqueName } from '../names.js';
import { Resources } from '../resources.js';
import { HandlerSpy } from '../spy.js';
import type { CaseEnv } from '../suite.js';
import { sleep, waitUntil } from '../wait.js';

/** What a transport-level case passes to `subscribe`; the spy records, `react` settles. */
export interface SubscribeOptions {
  source: string;
  spy: HandlerSpy;
  /** @default the case's `consumerGroup` */
  group?: string;
  /** @default 10 */
  maxInFlight?: number;
  /** Decides each delivery's settlement. Without it deliveries stay unsettled until the test acts. */
  react?: (delivery: Delivery) => void | Promise<void>;
}

/** Consumer options for a case: transport, store and scope default to the case's own. */
export type CaseConsumerOptions<T, R> = Omit<
  ConsumerSettings<T>,
  'transport' | 'store' | 'scope'
> & {
  /** Run per message, or per item of a batch handler's call (the harness's `handlers`). */
  handler: Handler<T, R>;
  /** @default a new connection */
  transport?: Transport;
  /** @default the case's store (one per case, from the harness) */
  store?: Store;
  /** @default the case's scope */
  scope?: string;
  /** @default a new spy */
  spy?: HandlerSpy;
};

/** A started consumer with what it was built from. */
export interface CaseConsumer {
  consumer: Consumer;
  spy: HandlerSpy;
  transport: Transport;
}

/**
 * One transport case's environment: connections, subscriptions, consumers and spies it opened
 * are closed when the case ends; names are unique to the case.
 */
export class TransportEnv implements CaseEnv {
  readonly scope = uniqueName('scope');
  /** The group subscriptions and consumers of this case join unless told otherwise. */
  readonly consumerGroup = uniqueName('group');
  private readonly deadLetterGroup = uniqueName('dlq-reader');
  private readonly resources = new Resources();
  private store: Promise<Store> | undefined;

  constructor(
    readonly harness: TransportHarness,
    readonly timing: ResolvedTransportTiming,
  ) {}

  get capabilities(): Capabilities {
    return this.harness.capabilities;
  }

  /** A spy whose waits time out after `timing.waitMs`. */
  spy(): HandlerSpy {
    const spy = new HandlerSpy({ timeoutMs: this.timing.waitMs });
    this.resources.defer('spy', () => spy.dispose());
    return spy;
  }

  /** A new connection to the broker. */
  async connect(): Promise<Transport> {
    const transport = await this.harness.connect();
    this.resources.defer(`${transport.name} connection`, () => transport.close());
    return transport;
  }

  /** A fresh destination. */
  source(): Promise<string> {
    return this.harness.newSource();
  }

  /** A fresh consumer group name. */
  group(label = 'group'): string {
    return uniqueName(label);
  }

  /** A fresh requestId. */
  id(label = 'msg'): string {
    return `${label}-${uuidv7()}`;
  }

  /** Subscribes with the spy recording every delivery; nothing is settled unless `react` does. */
  async subscribe(transport: Transport, options: SubscribeOptions): Promise<Subscription> {
    const subscription = await transport.subscribe({
      source: options.source,
      maxInFlight: options.maxInFlight ?? 10,
      onDelivery: options.spy.onDelivery(options.react),
      group: options.group ?? this.consumerGroup,
    });
    this.resources.defer('subscription', () => subscription.close());
    return subscription;
  }

  /**
   * Keeps an unsettled delivery's broker lease alive (every lease/3) until it is settled, for
   * cases that hold deliveries across a quiet window. No-op for transports without a lease.
   */
  holdLease(delivery: Delivery): void {
    const leaseMs = this.harness.leaseMs;
    if (leaseMs === undefined || this.capabilities.leaseExtension === false) return;
    const timer = setInterval(
      () => {
        if (delivery.settled) return clearInterval(timer);
        void delivery.extendLease(leaseMs).then(
          (ok) => ok || clearInterval(timer),
          () => clearInterval(timer),
        );
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    timer.unref();
    this.resources.defer('lease keeper', () => clearInterval(timer));
  }

  /** The case's store: one per case, so every consumer of the case shares its records. */
  sharedStore(): Promise<Store> {
    if (!this.store) {
      this.store = (this.harness.createStore?.() ?? Promise.resolve(memoryStore())).then(
        (store) => {
          this.resources.defer('store', () => store.close());
          return store;
        },
      );
    }
    return this.store;
  }

  /** Creates, watches and starts a consumer with short test-friendly retry and drain settings. */
  async startConsumer<T, R>(options: CaseConsumerOptions<T, R>): Promise<CaseConsumer> {
    const { transport: given, store: givenStore, spy: givenSpy, handler, ...rest } = options;
    const spy = givenSpy ?? this.spy();
    const transport = given ?? (await this.connect());
    const store = givenStore ?? (await this.sharedStore());
    const consumer = createConsumer<T, R>({
      scope: this.scope,
      group: this.consumerGroup,
      leaseMs: this.harness.leaseMs ?? 2_000,
      concurrency: 4,
      storeErrorRetryDelayMs: 50,
      drainTimeoutMs: 2_000,
      ...rest,
      retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100, jitter: 'none', ...rest.retry },
      transport: spy.wrapTransport(transport),
      store,
      ...(this.harness.handlers === 'batch'
        ? { batchHandler: eachItem(spy.wrapHandler(handler)) }
        : { handler: spy.wrapHandler(handler) }),
    });
    const unwatch = spy.watch(consumer);
    this.resources.defer('consumer events', unwatch);
    this.resources.defer('consumer', () => consumer.stop({ timeoutMs: 1_000 }));
    await consumer.start();
    return { consumer, spy, transport };
  }

  /**
   * Publishes a sentinel to `source` and waits until `spy` saw it delivered, then acks it: proves
   * the subscription is live, so a following quiet window means something.
   */
  async sentinel(transport: Transport, source: string, spy: HandlerSpy): Promise<void> {
    const requestId = this.id('sentinel');
    await transport.publish(source, { requestId, body: 'sentinel' });
    const { data } = await spy.waitFor(requestId, 'delivered');
    await data.delivery.ack();
  }

  /** Waits the quiet window: how long "nothing else arrives" is watched. */
  quiet(): Promise<void> {
    return sleep(this.timing.quietMs);
  }

  /**
   * Reads `count` dead letters of `source` through a new connection and returns them unsettled
   * (the connection's close gives them back).
   */
  async deadLetters(source: string, count: number): Promise<Delivery[]> {
    const transport = await this.connect();
    const spy = this.spy();
    await this.subscribe(transport, {
      source: this.harness.deadLetterOf(source),
      group: this.deadLetterGroup,
      spy,
    });
    const records = await spy.waitForCount('delivered', count);
    await this.quiet();
    expect(spy.count('delivered'), `dead letters of ${source}`).toBe(count);
    return records.map((r) => r.data.delivery);
  }

  /** Asserts `source` has no dead letters (a sentinel proves the DLQ reader was live). */
  async expectNoDeadLetters(source: string): Promise<void> {
    const transport = await this.connect();
    const spy = this.spy();
    const deadLetterSource = this.harness.deadLetterOf(source);
    await this.subscribe(transport, { source: deadLetterSource, group: this.deadLetterGroup, spy });
    await this.sentinel(transport, deadLetterSource, spy);
    await this.quiet();
    const others = spy.all('delivered').filter((r) => !r.requestId?.startsWith('sentinel-'));
    expect(
      others.map((r) => r.requestId),
      `dead letters of ${source}`,
    ).toEqual([]);
  }

  /**
   * With a broker inspector: waits until `destination` (for `group`, by default the case's) has
   * nothing ready, in flight
   * or delayed — nothing lost, nothing left invisible. Without one: nothing to check.
   */
  async expectEmpty(destination: string, group = this.consumerGroup): Promise<void> {
    const inspect = this.harness.inspect;
    if (!inspect) return;
    let last = { ready: -1, inFlight: -1, delayed: -1 };
    await waitUntil(
      async () => {
        last = await inspect.depth(destination, group);
        return last.ready === 0 && last.inFlight === 0 && last.delayed === 0;
      },
      { timeoutMs: this.timing.waitMs, what: `${destination} to be empty` },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; last depth ${JSON.stringify(last)}`);
    });
  }

  /** Registers a cleanup step. */
  defer(what: string, close: () => unknown): void {
    this.resources.defer(what, close);
  }

  dispose(): Promise<void> {
    return this.resources.dispose();
  }
}

/** A batch handler that runs `handler` on every item at once and reports each item's outcome. */
function eachItem<T, R>(handler: Handler<T, R>): BatchHandler<T, R> {
  return (items) =>
    Promise.allSettled(
      items.map(({ message, ctx }) => Promise.resolve().then(() => handler(message, ctx))),
    );
}
