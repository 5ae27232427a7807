import { ConsumerStateError } from '../errors/index.js';
import type { EventHub } from '../observability/events.js';
import type { Health, Subscription, Transport } from '../transport/transport.js';
import type { Dispatcher, StopReport } from './dispatch.js';

export interface LifecycleOptions {
  transport: Transport;
  source: string;
  group: string;
  /** The transport's prefetch: as many as the dispatcher runs at once. */
  maxInFlight: number;
  drainTimeoutMs: number;
  dispatcher: Dispatcher;
  events: EventHub;
}

/**
 * The consumer's lifecycle: idle → running (`start`: subscribe, open the dispatcher) → stopping
 * (`stop`: stop fetching, drain, close the subscription) → idle. Also answers `health`.
 */
export class ConsumerLifecycle {
  private state: 'idle' | 'running' | 'stopping' = 'idle';
  private subscription: Subscription | undefined;
  /** Stopped at least once (for health's reason). */
  private stopped = false;
  /** The subscribe call of `start()`, which a concurrent `stop()` must wait for. */
  private starting: Promise<unknown> | undefined;
  private stopping: Promise<StopReport> | undefined;

  constructor(private readonly options: LifecycleOptions) {}

  async start(): Promise<void> {
    const { transport, source, group, maxInFlight, dispatcher, events } = this.options;
    if (this.state !== 'idle') {
      throw new ConsumerStateError(`consumer is ${this.state}, cannot start`);
    }
    this.enter('running');
    this.stopping = undefined;
    const subscribing = transport.subscribe({
      source,
      group,
      maxInFlight,
      onDelivery: dispatcher.offer,
      onError: (error) => events.emit('error', { source, error }),
    });
    this.starting = subscribing;
    try {
      this.subscription = await subscribing;
    } catch (error) {
      this.enter('idle');
      throw error;
    } finally {
      this.starting = undefined;
    }
  }

  /** Idempotent: a second call while stopping returns the same report. */
  stop(timeoutMs = this.options.drainTimeoutMs): Promise<StopReport> {
    if (this.state === 'idle') {
      return this.stopping ?? Promise.resolve({ drained: true, abandoned: 0 });
    }
    if (this.state === 'running') {
      this.enter('stopping');
      this.stopping = this.drain(timeoutMs);
    }
    return this.stopping as Promise<StopReport>;
  }

  health(): Health {
    if (this.state === 'stopping') return { status: 'down', reason: 'stopping' };
    if (this.state === 'idle') {
      return { status: 'down', reason: this.stopped ? 'stopped' : 'not started' };
    }
    return this.subscription?.health() ?? { status: 'degraded', reason: 'starting' };
  }

  private async drain(timeoutMs: number): Promise<StopReport> {
    // Stop fetching before any await, so nothing published from here on is started.
    const stopFetching = this.subscription?.stop();
    await this.starting?.catch(() => undefined);
    await stopFetching;
    await this.subscription?.stop();
    const report = await this.options.dispatcher.drain(
      timeoutMs,
      () => new ConsumerStateError('consumer stopped before the handler finished'),
    );
    // Whatever is still unsettled goes back to the broker, free of an attempt.
    await this.subscription?.close();
    this.subscription = undefined;
    this.enter('idle');
    this.stopped = true;
    return report;
  }

  /** The dispatcher starts deliveries exactly while the consumer is running. */
  private enter(state: 'idle' | 'running' | 'stopping'): void {
    this.state = state;
    this.options.dispatcher.accepting = state === 'running';
  }
}
