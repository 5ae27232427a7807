import type {
  ConsumedMessage,
  Consumer,
  ConsumerEventName,
  ConsumerEvents,
  Delivery,
  HandlerContext,
  IncomingMessage,
  RejectOptions,
  RetryOptions,
  Transport,
} from '@idemq/core';

/** What a settlement verb was called with and what it resolved. */
export interface SettlementData {
  delivery: Delivery;
  message: IncomingMessage;
  /** The verb's result: `false` when the delivery was already settled or is no longer valid. */
  ok: boolean;
}

/**
 * Everything a `HandlerSpy` records, by outcome name: the consumer's own events, plus what the
 * spy sees of deliveries (`delivered` and one entry per settlement verb) and of handlers.
 */
export interface SpyEvents extends ConsumerEvents {
  /**
   * The transport handed a delivery over; `nth` counts deliveries of this requestId. `delivery`
   * is the tracked one: settling it through the record is recorded too.
   */
  delivered: { delivery: Delivery; message: IncomingMessage; nth: number };
  acked: SettlementData;
  retried: SettlementData & { options: RetryOptions | undefined };
  rejected: SettlementData & { options: RejectOptions };
  released: SettlementData;
  extended: SettlementData & { ms: number };
  'handler-started': { message: ConsumedMessage<unknown>; ctx: HandlerContext };
  'handler-finished': {
    message: ConsumedMessage<unknown>;
    ctx: HandlerContext;
    durationMs: number;
  };
  'handler-failed': {
    message: ConsumedMessage<unknown>;
    ctx: HandlerContext;
    durationMs: number;
    error: unknown;
  };
}

/** An outcome name a spy can wait for. */
export type SpyOutcome = keyof SpyEvents;

/** One recorded outcome. `seq` orders records across every requestId. */
export interface SpyRecord<O extends SpyOutcome = SpyOutcome> {
  seq: number;
  /** `performance.now()` when recorded. */
  at: number;
  /** `undefined` when the message carried no usable string id. */
  requestId: string | undefined;
  outcome: O;
  data: SpyEvents[O];
}

/** Any record, discriminated by `outcome`. */
export type AnySpyRecord = { [O in SpyOutcome]: SpyRecord<O> }[SpyOutcome];

/** Options of `waitFor` / `waitForCount`. */
export interface WaitOptions<O extends SpyOutcome> {
  /** @default the spy's `timeoutMs` */
  timeoutMs?: number;
  /** Wait for the n-th matching record. @default 1 */
  count?: number;
  /** Only records passing this match. */
  where?: (record: SpyRecord<O>) => boolean;
}

interface Waiter {
  matches: (record: AnySpyRecord) => boolean;
  needed: number;
  found: AnySpyRecord[];
  resolve: (records: AnySpyRecord[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const CONSUMER_EVENTS: readonly ConsumerEventName[] = [
  'processed',
  'duplicate',
  'in-progress',
  'retry',
  'dead-letter',
  'lease-extended',
  'lease-lost',
  'store-error',
  'result-omitted',
  'error',
];

/**
 * Records every delivery, settlement, handler run and consumer event it is shown, and lets a test
 * wait for one by requestId and outcome — the message-queue-toolkit `HandlerSpy` pattern. It
 * never settles anything itself: every test chooses each delivery's outcome.
 *
 * @example
 * const spy = new HandlerSpy();
 * await transport.subscribe({ source, maxInFlight: 1, onDelivery: spy.onDelivery() });
 * await transport.publish(source, { requestId: 'r1', body: 'hi' });
 * const { data } = await spy.waitFor('r1', 'delivered');
 * await data.delivery.ack();
 * await spy.waitFor('r1', 'acked');
 */
export class HandlerSpy {
  private readonly log: AnySpyRecord[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly deliveriesPerId = new Map<string | undefined, number>();
  private seq = 0;
  private runningNow = 0;
  private runningMax = 0;
  private readonly timeoutMs: number;

  /** @param options.timeoutMs default wait timeout (default 5000) */
  constructor(options: { timeoutMs?: number } = {}) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** Handlers running right now (through `wrapHandler`). */
  get running(): number {
    return this.runningNow;
  }

  /** Most handlers that ever ran at once (through `wrapHandler`). */
  get maxRunning(): number {
    return this.runningMax;
  }

  /** Records an outcome; the spy's wrappers call this, custom hooks may too. */
  add<O extends SpyOutcome>(outcome: O, requestId: string | undefined, data: SpyEvents[O]): void {
    const record = {
      seq: ++this.seq,
      at: performance.now(),
      requestId,
      outcome,
      data,
    } as AnySpyRecord;
    this.log.push(record);
    for (const waiter of [...this.waiters]) {
      if (!waiter.matches(record)) continue;
      waiter.found.push(record);
      if (waiter.found.length >= waiter.needed) this.finish(waiter).resolve(waiter.found);
    }
  }

  /**
   * Records a delivery as `delivered` and returns it wrapped so that its settlement verbs are
   * recorded too (with what they resolved). The wrapper settles nothing on its own.
   */
  track(delivery: Delivery): Delivery {
    const { message } = delivery;
    const requestId = requestIdOf(message);
    const nth = (this.deliveriesPerId.get(requestId) ?? 0) + 1;
    this.deliveriesPerId.set(requestId, nth);
    const base = { delivery, message };
    const tracked: Delivery = {
      message,
      get settled() {
        return delivery.settled;
      },
      ack: async () => {
        const ok = await delivery.ack();
        this.add('acked', requestId, { ...base, ok });
        return ok;
      },
      retry: async (options?: RetryOptions) => {
        const ok = await delivery.retry(options);
        this.add('retried', requestId, { ...base, ok, options });
        return ok;
      },
      reject: async (options: RejectOptions) => {
        const ok = await delivery.reject(options);
        this.add('rejected', requestId, { ...base, ok, options });
        return ok;
      },
      release: async () => {
        const ok = await delivery.release();
        this.add('released', requestId, { ...base, ok });
        return ok;
      },
      extendLease: async (ms: number) => {
        const ok = await delivery.extendLease(ms);
        this.add('extended', requestId, { ...base, ok, ms });
        return ok;
      },
    };
    this.add('delivered', requestId, { delivery: tracked, message, nth });
    return tracked;
  }

  /**
   * An `onDelivery` callback for `transport.subscribe` that records each delivery and hands the
   * tracked delivery to `react` (if given) — where a test decides how to settle it. A `react`
   * that throws is recorded as an `error`.
   */
  onDelivery(react?: (delivery: Delivery) => void | Promise<void>): (delivery: Delivery) => void {
    return (delivery) => {
      const tracked = this.track(delivery);
      if (!react) return;
      // A throwing settlement verb breaks the contract: keep it visible in timeout reports.
      void Promise.resolve()
        .then(() => react(tracked))
        .catch((thrown: unknown) => {
          const error = thrown instanceof Error ? thrown : new Error(String(thrown));
          this.add('error', requestIdOf(delivery.message), {
            source: delivery.message.source,
            error,
          });
        });
    };
  }

  /** The same transport, with every delivery it hands out tracked (for consumer-level cases). */
  wrapTransport(transport: Transport): Transport {
    return {
      name: transport.name,
      capabilities: transport.capabilities,
      subscribe: (request) =>
        transport.subscribe({
          ...request,
          onDelivery: (delivery) => request.onDelivery(this.track(delivery)),
        }),
      publish: (destination, message) => transport.publish(destination, message),
      close: () => transport.close(),
    };
  }

  /** Records every event `consumer` emits; returns a function that stops listening. */
  watch(consumer: Pick<Consumer, 'on'>): () => void {
    const stops = CONSUMER_EVENTS.map((event) =>
      consumer.on(event, (payload) => this.addEvent(event, payload)),
    );
    return () => {
      for (const stop of stops) stop();
    };
  }

  /** Wraps a handler to record its start, end or failure, and to count concurrent runs. */
  wrapHandler<T, R>(
    handler: (message: ConsumedMessage<T>, ctx: HandlerContext) => Promise<R> | R,
  ): (message: ConsumedMessage<T>, ctx: HandlerContext) => Promise<R> {
    return async (message, ctx) => {
      const seen = message as ConsumedMessage<unknown>;
      const startedAt = performance.now();
      this.runningNow += 1;
      this.runningMax = Math.max(this.runningMax, this.runningNow);
      this.add('handler-started', message.requestId, { message: seen, ctx });
      try {
        const result = await handler(message, ctx);
        this.add('handler-finished', message.requestId, {
          message: seen,
          ctx,
          durationMs: performance.now() - startedAt,
        });
        return result;
      } catch (error) {
        this.add('handler-failed', message.requestId, {
          message: seen,
          ctx,
          durationMs: performance.now() - startedAt,
          error,
        });
        throw error;
      } finally {
        this.runningNow -= 1;
      }
    };
  }

  /**
   * Resolves with the `count`-th record of `outcome` for `requestId` — at once when it was
   * already recorded — or rejects after the timeout with everything seen for that id.
   */
  async waitFor<O extends SpyOutcome>(
    requestId: string,
    outcome: O,
    options: WaitOptions<O> = {},
  ): Promise<SpyRecord<O>> {
    const records = await this.wait(outcome, requestId, options);
    return records[records.length - 1] as SpyRecord<O>;
  }

  /** Resolves with the first `count` records of `outcome`, whatever their requestId. */
  async waitForCount<O extends SpyOutcome>(
    outcome: O,
    count: number,
    options: Omit<WaitOptions<O>, 'count'> = {},
  ): Promise<SpyRecord<O>[]> {
    return this.wait(outcome, undefined, { ...options, count });
  }

  /** Records so far, oldest first, optionally only of one outcome and/or requestId. */
  all<O extends SpyOutcome>(outcome: O, requestId?: string): SpyRecord<O>[];
  all(): AnySpyRecord[];
  all(outcome?: SpyOutcome, requestId?: string): AnySpyRecord[] {
    return this.log.filter(
      (r) =>
        (outcome === undefined || r.outcome === outcome) &&
        (requestId === undefined || r.requestId === requestId),
    );
  }

  /** How many records of `outcome` (for `requestId`, when given) were seen. */
  count(outcome: SpyOutcome, requestId?: string): number {
    return this.all(outcome, requestId).length;
  }

  /** Rejects every pending wait; call at the end of a test. */
  dispose(): void {
    for (const waiter of [...this.waiters]) {
      this.finish(waiter).reject(new Error('HandlerSpy disposed while waiting'));
    }
  }

  private wait<O extends SpyOutcome>(
    outcome: O,
    requestId: string | undefined,
    options: WaitOptions<O>,
  ): Promise<SpyRecord<O>[]> {
    const needed = options.count ?? 1;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const matches = (record: AnySpyRecord): boolean =>
      record.outcome === outcome &&
      (requestId === undefined || record.requestId === requestId) &&
      (options.where === undefined || options.where(record as SpyRecord<O>));
    const found = this.log.filter(matches);
    if (found.length >= needed) return Promise.resolve(found.slice(0, needed) as SpyRecord<O>[]);
    return new Promise<SpyRecord<O>[]>((resolve, reject) => {
      const waiter: Waiter = {
        matches,
        needed,
        found,
        resolve: (records) => resolve(records as SpyRecord<O>[]),
        reject,
        timer: setTimeout(() => {
          this.finish(waiter).reject(
            new Error(
              `HandlerSpy: timed out after ${timeoutMs} ms waiting for ${needed} × '${outcome}'` +
                `${requestId === undefined ? '' : ` of ${requestId}`} (got ${waiter.found.length}). ` +
                `Seen${requestId === undefined ? '' : ' for this id'}: ${this.describe(requestId)}`,
            ),
          );
        }, timeoutMs),
      };
      waiter.timer.unref();
      this.waiters.add(waiter);
    });
  }

  private finish(waiter: Waiter): Waiter {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    return waiter;
  }

  private addEvent<E extends ConsumerEventName>(event: E, payload: ConsumerEvents[E]): void {
    const requestId =
      'requestId' in payload && typeof payload.requestId === 'string'
        ? payload.requestId
        : undefined;
    this.add(event, requestId, payload as SpyEvents[E]);
  }

  private describe(requestId: string | undefined): string {
    const seen =
      requestId === undefined
        ? this.log.slice(-30)
        : this.all().filter((r) => r.requestId === requestId);
    if (seen.length === 0) return 'nothing';
    return seen
      .map((r) => {
        const ok = 'ok' in r.data ? `(${r.data.ok})` : '';
        return `${requestId === undefined ? `${r.requestId}:` : ''}${r.outcome}${ok}`;
      })
      .join(', ');
  }
}

/** The requestId of a message when it is a usable string, else `undefined`. */
export function requestIdOf(message: IncomingMessage): string | undefined {
  return typeof message.requestId === 'string' ? message.requestId : undefined;
}

/** The record at `index`, or a clear failure when there are fewer. */
export function recordAt<R extends SpyRecord>(records: readonly R[], index: number): R {
  const record = records[index];
  if (!record) {
    throw new Error(`expected a record at index ${index}, there are ${records.length}`);
  }
  return record;
}
