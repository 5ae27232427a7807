import type { Health, SubscribeRequest, Subscription } from '@idemq/core';
import type { ConsumeMessage } from 'amqplib';
import { ChannelAcks } from './acks.js';
import { ConfirmTracker } from './confirms.js';
import { type Connector, isConnectionLoss, reconnectDelayMs } from './connection.js';
import { type DeliveryChannel, type DeliveryContext, RabbitmqDelivery } from './delivery.js';
import { describeAmqpError } from './errors.js';
import { InternalHeaders, toIncoming } from './headers.js';
import { DEFAULT_GROUP, type ResolvedOptions } from './options.js';
import { answerWithin, closedWithin, openedWithin } from './rpcDeadline.js';
import type { SubscriptionTopology, Topology } from './topology.js';

/** One consumer channel: its deliveries can only ever be settled on it. */
interface ConsumerChannel extends DeliveryChannel {
  open: boolean;
  consumerTag: string | undefined;
}

export interface SubscriptionContext {
  connector: Connector;
  topology: Topology;
  settings: Pick<
    ResolvedOptions,
    | 'queueType'
    | 'confirmTimeoutMs'
    | 'rpcTimeoutMs'
    | 'reconnectInitialDelayMs'
    | 'reconnectMaxDelayMs'
    | 'logger'
  >;
  onEnded: (subscription: RabbitmqSubscription) => void;
}

type State = 'starting' | 'running' | 'stopped' | 'closed';

/**
 * One consumer of a group's queue, on a confirm channel of its own (prefetch = `maxInFlight`).
 * It keeps itself alive: a server-side cancel (queue deleted, node down) re-declares and
 * consumes again on the same channel; a lost channel or connection is replaced with backoff,
 * and the deliveries of the dead channel can no longer be settled (their tags are void, the
 * broker has requeued them).
 */
export class RabbitmqSubscription implements Subscription {
  private state: State = 'starting';
  private current: ConsumerChannel | undefined;
  private names: SubscriptionTopology | undefined;
  private reviving: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private releaseHold: (() => void) | undefined;
  private readonly group: string;
  /** What every delivery of this subscription shares. */
  private readonly deliveryContext: DeliveryContext;

  constructor(
    private readonly request: SubscribeRequest,
    private readonly context: SubscriptionContext,
  ) {
    this.group = request.group ?? DEFAULT_GROUP;
    this.deliveryContext = { source: request.source, topology: context.topology };
  }

  /** Declares the topology and starts consuming; resolves once the consumer is registered. */
  async start(): Promise<void> {
    this.releaseHold = this.context.connector.hold();
    try {
      await this.open();
    } catch (error) {
      this.end();
      throw error;
    }
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.state === 'starting' || this.state === 'running') this.state = 'stopped';
    this.interruptPause();
    this.stopping = this.cancelConsumer();
    return this.stopping;
  }

  health(): Health {
    if (this.state === 'stopped') return { status: 'down', reason: 'stopped' };
    if (this.state === 'closed') return { status: 'down', reason: 'closed' };
    const failure = this.context.connector.failure;
    if (failure) return { status: 'down', reason: `connection lost for good: ${failure.message}` };
    if (this.state === 'starting') return { status: 'degraded', reason: 'starting' };
    if (!this.current?.open) return { status: 'degraded', reason: 'reconnecting' };
    if (this.current.consumerTag === undefined) {
      return { status: 'degraded', reason: 'consuming again after a server-side cancel' };
    }
    return { status: 'up' };
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      await this.stop();
      await this.reviving;
      this.state = 'closed';
      const holder = this.current;
      this.current = undefined;
      if (holder?.open) {
        // A clean shutdown gives every unsettled delivery back, free of an attempt.
        await Promise.allSettled([...holder.unsettled].map((d) => d.giveBack()));
        await this.closeChannel(holder);
      }
      this.end();
    })();
    return this.closing;
  }

  /**
   * The transport is closing: like a process dying, unsettled deliveries are not given back
   * here; closing the channel makes the broker requeue them (counted on quorum queues).
   */
  async abandon(): Promise<void> {
    this.state = 'closed';
    this.interruptPause();
    const holder = this.current;
    this.current = undefined;
    if (holder) {
      retire(holder);
      await this.closeChannel(holder);
    }
    this.end();
  }

  private end(): void {
    this.state = 'closed';
    this.releaseHold?.();
    this.context.onEnded(this);
  }

  private async cancelConsumer(): Promise<void> {
    await this.reviving;
    const holder = this.current;
    const tag = holder?.consumerTag;
    if (!holder?.open || tag === undefined) return;
    holder.consumerTag = undefined;
    await this.cancel(holder, tag);
  }

  /** Opens a channel, declares, sets the prefetch and consumes. */
  private async open(): Promise<void> {
    const { connector, topology, settings } = this.context;
    const live = await connector.get();
    this.names = await topology.subscription(this.request.source, this.group);
    topology.watchTiersOf(this.names.queue);
    const channel = await openedWithin(live.model.createConfirmChannel(), settings.rpcTimeoutMs);
    const holder: ConsumerChannel = {
      tracker: new ConfirmTracker(channel, settings.confirmTimeoutMs),
      acks: new ChannelAcks(channel),
      open: true,
      consumerTag: undefined,
      unsettled: new Set(),
    };
    channel.on('error', (error: Error) => {
      settings.logger.warn(
        { source: this.request.source, error: describeAmqpError(error) },
        'idemq rabbitmq: consumer channel error',
      );
    });
    channel.on('close', () => this.channelClosed(holder));
    try {
      await this.answered(holder, 'basic.qos', channel.prefetch(this.request.maxInFlight, false));
      if (this.state === 'closed') throw new Error('subscription closed while opening');
      this.current = holder;
      await this.consume(holder);
    } catch (error) {
      // Not awaited: a channel left without an answer does not answer its close either.
      this.drop(holder);
      throw error;
    }
  }

  private async consume(holder: ConsumerChannel): Promise<void> {
    const queue = this.names?.queue as string;
    const { consumerTag } = await this.answered(
      holder,
      `basic.consume on queue "${queue}"`,
      holder.tracker.channel.consume(queue, (message) => this.onMessage(holder, message), {
        noAck: false,
      }),
    );
    holder.consumerTag = consumerTag;
    if (this.state === 'starting') this.state = 'running';
    if (this.state === 'stopped') {
      // stop() came while consuming started: undo it; deliveries handed out stay settleable.
      holder.consumerTag = undefined;
      await this.cancel(holder, consumerTag);
    } else if (this.state === 'closed') {
      // The transport closed meanwhile: nothing will settle on this channel.
      retire(holder);
      await this.closeChannel(holder);
    }
  }

  /**
   * Cancels the consumer; one the broker does not answer within rpcTimeoutMs drops the channel,
   * so that stopping never waits for ever (its unsettled deliveries then come back redelivered).
   */
  private async cancel(holder: ConsumerChannel, tag: string): Promise<void> {
    const cancelling = holder.tracker.channel.cancel(tag);
    await this.answered(holder, `basic.cancel on queue "${this.names?.queue}"`, cancelling).catch(
      () => undefined,
    );
  }

  /** Closes the channel, waiting for the broker's answer at most rpcTimeoutMs. */
  private closeChannel(holder: ConsumerChannel): Promise<boolean> {
    const { channel } = holder.tracker;
    return closedWithin(() => channel.close(), this.context.settings.rpcTimeoutMs);
  }

  /** `call`, an RPC on `holder`'s channel; left unanswered past rpcTimeoutMs, the channel is dropped. */
  private answered<T>(holder: ConsumerChannel, what: string, call: Promise<T>): Promise<T> {
    return answerWithin(call, this.context.settings.rpcTimeoutMs, what, () => this.drop(holder));
  }

  /**
   * Gives up a consumer channel without waiting for it: its deliveries can no longer be settled
   * (the broker requeues them once the channel closes), and while closing amqplib drops whatever
   * else arrives on it, so a consume the broker answers late delivers nothing here.
   */
  private drop(holder: ConsumerChannel): void {
    retire(holder);
    holder.unsettled.clear();
    if (this.current === holder) this.current = undefined;
    holder.tracker.channel.close().catch(() => undefined);
  }

  /** amqplib rethrows what a consume callback throws and that kills the connection: catch all. */
  private onMessage(holder: ConsumerChannel, message: ConsumeMessage | null): void {
    try {
      if (message === null) {
        this.serverCancelled(holder);
        return;
      }
      this.deliver(holder, message);
    } catch (error) {
      this.context.settings.logger.error(
        { source: this.request.source, error: describeAmqpError(error) },
        'idemq rabbitmq: handing a delivery over failed',
      );
      this.request.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private deliver(holder: ConsumerChannel, message: ConsumeMessage): void {
    const names = this.names as SubscriptionTopology;
    holder.acks.delivered(message);
    const incoming = toIncoming(message, this.request.source, this.context.settings.queueType);
    const delivery = new RabbitmqDelivery(message, incoming, holder, names, this.deliveryContext);
    holder.unsettled.add(delivery);
    if (this.state !== 'starting' && this.state !== 'running') {
      // Arrived between stop() and the broker's cancel-ok: never handed out, given back free.
      delivery.giveBack().catch((error: unknown) => this.giveBackFailed(error));
      return;
    }
    const notBefore = Number(message.properties.headers?.[InternalHeaders.notBefore]);
    const waitMs = Number.isFinite(notBefore) ? notBefore - Date.now() : 0;
    if (waitMs > 0) {
      // A delay longer than the largest tier: another hop, unseen by the consumer.
      delivery.postpone(waitMs).catch((error: unknown) => this.giveBackFailed(error));
      return;
    }
    this.request.onDelivery(delivery);
  }

  private giveBackFailed(error: unknown): void {
    this.context.settings.logger.warn(
      { source: this.request.source, error: describeAmqpError(error) },
      'idemq rabbitmq: giving a delivery back failed; the broker redelivers it',
    );
  }

  /** The broker cancelled the consumer (queue deleted, its node down): consume again. */
  private serverCancelled(holder: ConsumerChannel): void {
    holder.consumerTag = undefined;
    if (this.current !== holder || (this.state !== 'running' && this.state !== 'starting')) return;
    this.context.settings.logger.warn(
      { source: this.request.source, queue: this.names?.queue },
      'idemq rabbitmq: the broker cancelled the consumer; subscribing again',
    );
    this.revive(async () => {
      if (!holder.open) return this.open();
      // The channel lives on, and with it the deliveries in flight: consume again on it.
      this.context.topology.reset();
      this.names = await this.context.topology.subscription(this.request.source, this.group);
      await this.consume(holder);
    });
  }

  private channelClosed(holder: ConsumerChannel): void {
    retire(holder);
    holder.unsettled.clear();
    if (this.current !== holder) return;
    this.current = undefined;
    if (this.state !== 'running') return;
    this.context.settings.logger.warn(
      { source: this.request.source },
      'idemq rabbitmq: consumer channel closed; opening a new one',
    );
    this.revive(() => this.open());
  }

  /** Runs `attempt` until it succeeds or the subscription stops, with backoff in between. */
  private revive(attempt: () => Promise<void>): void {
    if (this.reviving) return;
    this.reviving = (async () => {
      for (let tries = 1; this.state === 'running'; tries++) {
        try {
          await attempt();
          this.context.settings.logger.info(
            { source: this.request.source, tries },
            'idemq rabbitmq: consuming again',
          );
          return;
        } catch (error) {
          if (this.state !== 'running') return;
          const permanent = this.context.connector.failure;
          if (permanent) {
            // A connection the user owns died: nothing here can bring it back.
            this.request.onError?.(permanent);
            return;
          }
          // Transient (broker away) is only logged; anything else (406, 403…) is reported too.
          if (!isConnectionLoss(error)) {
            this.request.onError?.(error instanceof Error ? error : new Error(String(error)));
          }
          this.context.settings.logger.warn(
            { source: this.request.source, tries, error: describeAmqpError(error) },
            'idemq rabbitmq: subscribing again failed',
          );
          await this.pause(reconnectDelayMs(tries, this.context.settings));
          if (!this.current?.open) attempt = () => this.open();
        }
      }
    })().finally(() => {
      this.reviving = undefined;
    });
  }

  /** A backoff wait that keeps the process alive (the subscription is running); stop() ends it. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      this.retryTimer = setTimeout(resolve, ms);
    }).finally(() => {
      this.wake = undefined;
      this.retryTimer = undefined;
    });
  }

  private interruptPause(): void {
    clearTimeout(this.retryTimer);
    this.wake?.();
  }
}

/** The channel is done for: its deliveries can no longer be settled (the broker took them back). */
function retire(holder: ConsumerChannel): void {
  holder.open = false;
  holder.acks.close();
}
