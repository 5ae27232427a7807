import { toError } from '../errors/index.js';
import type { EventHub } from '../observability/events.js';
import type { Delivery } from '../transport/transport.js';
import { Abandonment } from './abandonment.js';
import type { DeliverySettler } from './deliverySettler.js';

/**
 * Processes one delivery to its settlement. `abandon` is thrown when a drain times out: the work
 * should then give up and give its message back.
 */
export type ProcessDelivery = (delivery: Delivery, abandon: Abandonment) => Promise<void>;

export interface StopReport {
  /** Every running handler finished within the timeout. */
  drained: boolean;
  /** Handlers still running at the timeout, whose messages were given back. */
  abandoned: number;
}

export interface DispatcherOptions {
  /** Most deliveries processed at once. */
  concurrency: number;
  process: ProcessDelivery;
  settler: DeliverySettler;
  events: EventHub;
  source: string;
}

/**
 * The consumer's dispatch: takes deliveries in from the transport and runs at most `concurrency`
 * of them at once, queueing the rest. While not `accepting` (stopping), a delivery is given back
 * untouched instead of started.
 */
export class Dispatcher {
  /** Whether new deliveries are started; the lifecycle opens and closes it. */
  accepting = false;
  /** Running work, with the switch that abandons it when a drain times out. */
  private readonly running = new Map<Promise<void>, Abandonment>();
  /**
   * Deliveries waiting for a slot. The transport's prefetch normally keeps this empty, but a
   * broker whose lease lapsed mid-handler frees the slot and delivers again: the consumer still
   * never runs more than `concurrency` handlers.
   */
  private readonly waiting: Delivery[] = [];

  constructor(private readonly options: DispatcherOptions) {}

  /** The transport's `onDelivery`. */
  readonly offer = (delivery: Delivery): void => {
    if (!this.accepting) {
      // Stopping: give it back untouched, for free, rather than start new work.
      void this.options.settler.release(delivery);
      return;
    }
    if (this.running.size >= this.options.concurrency) {
      this.waiting.push(delivery);
      return;
    }
    this.start(delivery);
  };

  /**
   * Gives waiting deliveries back, waits up to `timeoutMs` for running ones, then abandons those
   * still running with `abandonReason`. Call it once `accepting` is false and fetching stopped.
   */
  async drain(timeoutMs: number, abandonReason: () => unknown): Promise<StopReport> {
    const { settler } = this.options;
    for (const delivery of this.waiting.splice(0)) await settler.release(delivery);
    const running = [...this.running.keys()];
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled(running).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    const abandoned = timedOut ? this.running.size : 0;
    if (timedOut) for (const abandon of this.running.values()) abandon.abort(abandonReason());
    return { drained: !timedOut, abandoned };
  }

  private start(delivery: Delivery): void {
    const { process, settler, events, source } = this.options;
    const abandon = new Abandonment();
    const work = process(delivery, abandon)
      .catch((thrown) => {
        // A bug in a hook or decoder must not lose the message: give it back.
        events.emit('error', { source, error: toError(thrown) });
        return settler.release(delivery).then(() => undefined);
      })
      .finally(() => {
        this.running.delete(work);
        const next = this.waiting.shift();
        if (next) this.offer(next);
      });
    this.running.set(work, abandon);
  }
}
