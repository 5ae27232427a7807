import {
  type Delivery,
  type Health,
  type IncomingMessage,
  MemoryBroker,
  type OutgoingMessage,
  type RetryOptions,
  type Store,
  type Transport,
  uuidv7,
} from '@idemq/core';
import { ForwardingDelivery, ForwardingSubscription, forwardingTransport } from './forwarding.js';

// Negative controls: core's memory transport with exactly one rule of the Transport contract
// broken each. They are test fixtures, never shipped: the conformance suite must fail on them.

type QueuedMessage = Parameters<MemoryBroker['requeue']>[2];

/** How a control turns a connection of the reference transport into a broken one. */
export type BreakTransport = (inner: Transport, broker: MemoryBroker) => Transport;

/**
 * Acks on receipt: the broker forgets a message as soon as it is handed over. The holder's own
 * retry and release still send it back (as an adapter re-publishing would), but nothing else
 * does: a crash, a closed subscription or a lapsed lease loses it.
 */
export class AckOnReceiptBroker extends MemoryBroker {
  private holderGivesBack = false;

  override requeue(destination: string, group: string, queued: QueuedMessage, delayMs?: number) {
    // A retry always has a delay; a give-back has none: only the holder's release gets through.
    if (delayMs === undefined && !this.holderGivesBack) return;
    super.requeue(destination, group, queued, delayMs);
  }

  /** Runs `release` with give-backs let through; the memory transport requeues synchronously. */
  releasing(release: () => Promise<boolean>): Promise<boolean> {
    this.holderGivesBack = true;
    try {
      return release();
    } finally {
      this.holderGivesBack = false;
    }
  }
}

export const ackOnReceipt: BreakTransport = (inner, broker) => {
  if (!(broker instanceof AckOnReceiptBroker)) throw new Error('needs an AckOnReceiptBroker');
  return forwardingTransport(inner, {
    delivery: (delivery) =>
      new (class extends ForwardingDelivery {
        override release() {
          return broker.releasing(() => this.inner.release());
        }
      })(delivery),
  });
};

/** Ignores the retry delay: `retry({ delayMs })` puts the message back at once. */
export class NoDelayBroker extends MemoryBroker {
  override requeue(destination: string, group: string, queued: QueuedMessage, delayMs?: number) {
    super.requeue(destination, group, queued, delayMs === undefined ? undefined : 0);
  }
}

/** A no-op ack: resolves true, marks the delivery settled, and never tells the broker. */
export const noopAck: BreakTransport = (inner) =>
  forwardingTransport(inner, {
    delivery: (delivery) => new NoopAckDelivery(delivery),
  });

class NoopAckDelivery extends ForwardingDelivery {
  private faked = false;

  override get settled() {
    return this.faked || this.inner.settled;
  }

  override async ack() {
    if (this.settled) return false;
    this.faked = true;
    return true;
  }

  override retry(options?: RetryOptions) {
    return this.faked ? Promise.resolve(false) : this.inner.retry(options);
  }

  override reject(options: Parameters<Delivery['reject']>[0]) {
    return this.faked ? Promise.resolve(false) : this.inner.reject(options);
  }

  override release() {
    return this.faked ? Promise.resolve(false) : this.inner.release();
  }

  override extendLease(ms: number) {
    return this.faked ? Promise.resolve(false) : this.inner.extendLease(ms);
  }
}

/**
 * Keeps fetching after `Subscription.stop()` (`when: 'stop'`, reported as stopped all the same)
 * or after `Subscription.close()` (`when: 'close'`: it gives its unsettled deliveries back and
 * reports closed, but stays attached). What it fetches afterwards still reaches the subscriber,
 * a little later, so that a subscriber releasing it cannot spin the loop without a pause.
 */
export function keepsFetching(when: 'stop' | 'close'): BreakTransport {
  return (inner) =>
    forwardingTransport(inner, {
      async subscribe(request) {
        let ended = false;
        const handedOut = new Set<Delivery>();
        const subscription = await inner.subscribe({
          ...request,
          onDelivery: (delivery) => {
            handedOut.add(delivery);
            if (!ended) return request.onDelivery(delivery);
            setTimeout(() => request.onDelivery(delivery), LATE_DELIVERY_MS).unref();
          },
        });
        return new (class extends ForwardingSubscription {
          override async stop() {
            if (when === 'close') return this.inner.stop();
            ended = true;
          }
          override async close() {
            if (when === 'stop') return this.inner.close();
            ended = true;
            const unsettled = [...handedOut].filter((d) => !d.settled);
            await Promise.all(unsettled.map((d) => d.release()));
          }
          override health(): Health {
            const health = this.inner.health();
            if (!ended || health.status !== 'up') return health;
            return { status: 'down', reason: when === 'stop' ? 'stopped' : 'closed' };
          }
        })(subscription);
      },
    });
}

const LATE_DELIVERY_MS = 10;

/**
 * A batching producer that drops its buffer on close: `publish` resolves once the message is
 * buffered, the buffer goes to the broker every `lingerMs`, and `close()` discards what is left.
 */
export function dropsBufferOnClose(lingerMs = 25): BreakTransport {
  return (inner) => {
    let buffer: Array<[string, OutgoingMessage]> = [];
    let closed = false;
    const flush = setInterval(() => {
      const batch = buffer;
      buffer = [];
      for (const [destination, message] of batch) {
        void inner.publish(destination, message).catch(() => undefined);
      }
    }, lingerMs);
    flush.unref();
    return forwardingTransport(inner, {
      async publish(destination, message) {
        if (closed) return inner.publish(destination, message);
        const requestId = message.requestId ?? uuidv7();
        buffer.push([destination, { ...message, requestId }]);
        return { requestId };
      },
      close() {
        closed = true;
        clearInterval(flush);
        buffer = [];
        return inner.close();
      },
    });
  };
}

/**
 * Resolves a publish before the broker confirmed it: the message is sent on its way and
 * `publish` resolves at once; it reaches the broker `latencyMs` later, or never when the
 * connection closes meanwhile.
 */
export function resolvesBeforeConfirm(latencyMs = 20): BreakTransport {
  return (inner) => {
    let closed = false;
    return forwardingTransport(inner, {
      async publish(destination, message) {
        if (closed) return inner.publish(destination, message);
        const requestId = message.requestId ?? uuidv7();
        const timer = setTimeout(() => {
          if (!closed) void inner.publish(destination, { ...message, requestId }).catch(() => {});
        }, latencyMs);
        timer.unref();
        return { requestId };
      },
      close() {
        closed = true;
        return inner.close();
      },
    });
  };
}

/** Declares an exact counter but reports every delivery as attempt 1. */
export const stuckAttempt: BreakTransport = (inner) =>
  forwardingTransport(inner, {
    delivery: (delivery) => new RenumberedDelivery(delivery, { attempt: 1 }),
  });

/**
 * Not broken: a transport without a redelivery counter (`redeliveryCounter: 'none'`), whose
 * deliveries carry its own number (always 1, `attemptSource: 'emulated'`), as Kafka's do.
 */
export const noCounter: BreakTransport = (inner) =>
  forwardingTransport(inner, {
    capabilities: Object.freeze({ ...inner.capabilities, redeliveryCounter: 'none' }),
    delivery: (delivery) =>
      new RenumberedDelivery(delivery, { attempt: 1, attemptSource: 'emulated' }),
  });

class RenumberedDelivery extends ForwardingDelivery {
  private readonly renumbered: IncomingMessage;

  constructor(
    inner: Delivery,
    fields: Partial<Pick<IncomingMessage, 'attempt' | 'attemptSource'>>,
  ) {
    super(inner);
    this.renumbered = { ...inner.message, ...fields };
  }

  override get message() {
    return this.renumbered;
  }
}

/**
 * A store that answers every claim as attempt 1: what the handler would see if the engine took
 * its attempt from a transport without a counter instead of from the idempotency record.
 */
export function attemptBlindStore(inner: Store): Store {
  return {
    claim: async (request) => {
      const outcome = await inner.claim(request);
      return outcome.status === 'claimed' ? { ...outcome, attempt: 1 } : outcome;
    },
    claimMany: async (requests) =>
      (await inner.claimMany(requests)).map((outcome) =>
        outcome.status === 'claimed' ? { ...outcome, attempt: 1 } : outcome,
      ),
    complete: (request) => inner.complete(request),
    completeMany: (requests) => inner.completeMany(requests),
    fail: (request) => inner.fail(request),
    renew: (request) => inner.renew(request),
    release: (request) => inner.release(request),
    inspect: (request) => inner.inspect(request),
    close: () => inner.close(),
  };
}
