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
} from '@idemq/core';

/** A delivery that passes every call to the real one; controls override the verb they break. */
export class ForwardingDelivery implements Delivery {
  constructor(readonly inner: Delivery) {}

  get message(): IncomingMessage {
    return this.inner.message;
  }

  get settled(): boolean {
    return this.inner.settled;
  }

  ack(): Promise<boolean> {
    return this.inner.ack();
  }

  retry(options?: RetryOptions): Promise<boolean> {
    return this.inner.retry(options);
  }

  reject(options: RejectOptions): Promise<boolean> {
    return this.inner.reject(options);
  }

  release(): Promise<boolean> {
    return this.inner.release();
  }

  extendLease(ms: number): Promise<boolean> {
    return this.inner.extendLease(ms);
  }
}

/** A subscription that passes every call to the real one. */
export class ForwardingSubscription implements Subscription {
  constructor(readonly inner: Subscription) {}

  stop(): Promise<void> {
    return this.inner.stop();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  health(): Health {
    return this.inner.health();
  }
}

/** What a control changes of a transport; everything else is the real transport's. */
export interface TransportOverrides {
  capabilities?: Capabilities;
  delivery?(inner: Delivery): Delivery;
  /** Subscribes in its own way; `request.onDelivery` already wraps deliveries with `delivery`. */
  subscribe?(request: SubscribeRequest): Promise<Subscription>;
  publish?(destination: string, message: OutgoingMessage): Promise<PublishReceipt>;
  close?(): Promise<void>;
}

/** The real transport with one behaviour swapped: the shape of every negative control. */
export function forwardingTransport(inner: Transport, overrides: TransportOverrides): Transport {
  return {
    name: inner.name,
    capabilities: overrides.capabilities ?? inner.capabilities,
    subscribe(request: SubscribeRequest): Promise<Subscription> {
      const { delivery } = overrides;
      const wrapped = delivery
        ? { ...request, onDelivery: (d: Delivery) => request.onDelivery(delivery(d)) }
        : request;
      return overrides.subscribe?.(wrapped) ?? inner.subscribe(wrapped);
    },
    publish: (destination, message) =>
      overrides.publish?.(destination, message) ?? inner.publish(destination, message),
    close: () => overrides.close?.() ?? inner.close(),
  };
}
