import { toError } from '../errors/index.js';
import type { EventHub } from '../observability/events.js';
import type { Delivery } from '../transport/transport.js';

/** The reason and code a dead letter carries. */
export interface RejectCause {
  reason: string;
  code: string;
}

/**
 * Settles deliveries for one consumer. A settlement that throws means the broker connection is
 * gone, and the broker redelivers unsettled messages by itself: it is reported as an `error`
 * event, never thrown, so no settlement failure can stop the consumer.
 */
export class DeliverySettler {
  constructor(
    private readonly events: EventHub,
    private readonly source: string,
  ) {}

  /** Settles; false when the delivery could no longer be settled (lease or connection gone). */
  async settle(verb: () => Promise<boolean>): Promise<boolean> {
    try {
      return await verb();
    } catch (thrown) {
      this.events.emit('error', { source: this.source, error: toError(thrown) });
      return false;
    }
  }

  /** Gives the delivery back to the broker without counting an attempt. */
  release(delivery: Delivery): Promise<boolean> {
    return this.settle(() => delivery.release());
  }

  /** Dead-letters; the event fires only when the message really went to the dead letters. */
  async reject(
    delivery: Delivery,
    requestId: string | undefined,
    cause: RejectCause,
    attempt: number | undefined,
  ): Promise<void> {
    const rejected = await this.settle(() =>
      delivery.reject({ ...cause, ...(attempt === undefined ? {} : { attempts: attempt }) }),
    );
    if (rejected) {
      this.events.emit('dead-letter', { requestId, source: this.source, attempt, ...cause });
    }
  }
}
