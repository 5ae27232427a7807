import { type Channel, channel } from 'node:diagnostics_channel';
import type { ResultOmission } from '../store/store.js';

/** What each consumer event carries: enough for metrics and OpenTelemetry spans. */
export interface ConsumerEvents {
  /** The handler succeeded and the record is COMPLETED. */
  processed: { requestId: string; source: string; attempt: number; durationMs: number };
  /** The id was already COMPLETED: acked without running the handler. */
  duplicate: { requestId: string; source: string };
  /** Another owner holds a live lease: redelivery scheduled after it. */
  'in-progress': { requestId: string; source: string; retryAfterMs: number };
  /** The handler failed and will be tried again. */
  retry: { requestId: string; source: string; attempt: number; delayMs: number; error: Error };
  /** The message went to the dead-letter destination. */
  'dead-letter': {
    requestId: string | undefined;
    source: string;
    attempt: number | undefined;
    reason: string;
    code: string;
  };
  /** The lease was renewed while the handler ran. */
  'lease-extended': { requestId: string; source: string; leaseMs: number };
  /**
   * A lease was lost. `store`: this owner lost the record to another; its result was discarded.
   * `broker`: the heartbeat could not extend the broker's lease (SQS visibility, receipt handle
   * gone); the handler goes on under its store claim and the redelivered copy is a duplicate.
   */
  'lease-lost': { requestId: string; source: string; attempt: number; lease: 'store' | 'broker' };
  /**
   * With `storeResults`: the handler succeeded but its result could not be stored (`reason`
   * `too-large` or `not-serializable`; `error` is the refusal). The record is COMPLETED without
   * it, so the handler never runs again for it; duplicates get `resultOmitted` instead of the
   * result. `source` is undefined for `createIdempotency().run()`.
   */
  'result-omitted': {
    requestId: string;
    scope: string;
    source: string | undefined;
    reason: ResultOmission;
    error: Error;
  };
  /** The store failed; the message was handled per `onStoreError`. */
  'store-error': { requestId: string | undefined; source: string; error: Error };
  /** The transport or a settlement failed. */
  error: { source: string; error: Error };
}

export type ConsumerEventName = keyof ConsumerEvents;

type Listener<E extends ConsumerEventName> = (payload: ConsumerEvents[E]) => void;

/**
 * A tiny typed emitter. Every event also goes to `node:diagnostics_channel` as `idemq:<event>`,
 * so telemetry can subscribe without a hook in core. A throwing listener never breaks the engine.
 */
export class EventHub {
  private readonly listeners = new Map<ConsumerEventName, Set<Listener<never>>>();
  /** Each event's diagnostics channel, looked up once (a lookup per message is a string build). */
  private readonly channels = new Map<ConsumerEventName, Channel>();

  on<E extends ConsumerEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<E extends ConsumerEventName>(event: E, listener: Listener<E>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  emit<E extends ConsumerEventName>(event: E, payload: ConsumerEvents[E]): void {
    let diagnostics = this.channels.get(event);
    if (!diagnostics) {
      diagnostics = channel(`idemq:${event}`);
      this.channels.set(event, diagnostics);
    }
    if (diagnostics.hasSubscribers) diagnostics.publish(payload);
    const listeners = this.listeners.get(event);
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        (listener as Listener<E>)(payload);
      } catch {
        // A listener's bug must not change how a message is settled.
      }
    }
  }
}
