import { ReadyQueue } from './readyQueue.js';
import type { IncomingMessage } from './transport.js';

/** A message as the broker keeps it, between deliveries. */
export interface StoredMessage {
  /** Whatever the producer sent; `publish` to the broker directly to inject a bad id. */
  requestId: unknown;
  body: Uint8Array;
  headers: Record<string, string>;
  destination: string;
  key?: string;
  contentType?: string;
  publishedAt: number;
}

/** One copy of a message in one group's queue. */
export interface QueuedMessage {
  stored: StoredMessage;
  /** Deliveries so far that counted as attempts. */
  attempts: number;
  redelivered: boolean;
}

/** A live subscriber as the broker sees it. */
export interface BrokerSubscriber {
  readonly maxInFlight: number;
  inFlight: number;
  fetching: boolean;
  /** Hands one message to the subscriber. */
  deliver(queued: QueuedMessage): void;
}

/** One consumer group of one destination: a FIFO of ready messages and its subscribers. */
class Group {
  readonly ready = new ReadyQueue<QueuedMessage>();
  readonly subscribers: BrokerSubscriber[] = [];
  delayed = 0;
  inFlight = 0;
  private cursor = 0;

  /** Hands ready messages to subscribers with room, round-robin so competing load spreads. */
  dispatch(): void {
    while (this.ready.length > 0) {
      const subscriber = this.nextWithRoom();
      if (!subscriber) return;
      const queued = this.ready.shift() as QueuedMessage;
      subscriber.inFlight += 1;
      this.inFlight += 1;
      subscriber.deliver(queued);
    }
  }

  private nextWithRoom(): BrokerSubscriber | undefined {
    const count = this.subscribers.length;
    for (let i = 0; i < count; i++) {
      const candidate = this.subscribers[(this.cursor + i) % count];
      if (candidate?.fetching && candidate.inFlight < candidate.maxInFlight) {
        this.cursor = (this.cursor + i + 1) % count;
        return candidate;
      }
    }
    return undefined;
  }
}

/**
 * The in-process broker behind `memoryTransport`. Several transports on one broker behave like
 * several connections to one server, so a test can "crash" one and see another take over.
 */
export class MemoryBroker {
  private readonly groups = new Map<string, Map<string, Group>>();
  /** Messages published before any group subscribed, held for the first one. */
  private readonly held = new Map<string, QueuedMessage[]>();
  private readonly timers = new Set<NodeJS.Timeout>();

  publish(stored: StoredMessage): void {
    const groups = this.groups.get(stored.destination);
    if (!groups || groups.size === 0) {
      const held = this.held.get(stored.destination) ?? [];
      held.push(fresh(stored));
      this.held.set(stored.destination, held);
      return;
    }
    for (const group of groups.values()) {
      group.ready.push(fresh(stored));
      group.dispatch();
    }
  }

  attach(destination: string, groupName: string, subscriber: BrokerSubscriber): void {
    const group = this.group(destination, groupName);
    group.subscribers.push(subscriber);
    group.dispatch();
  }

  detach(destination: string, groupName: string, subscriber: BrokerSubscriber): void {
    const group = this.group(destination, groupName);
    const index = group.subscribers.indexOf(subscriber);
    if (index >= 0) group.subscribers.splice(index, 1);
  }

  /** A subscriber is done with a delivery (any outcome): frees its slot. */
  settled(destination: string, groupName: string, subscriber: BrokerSubscriber): void {
    const group = this.group(destination, groupName);
    subscriber.inFlight -= 1;
    group.inFlight -= 1;
  }

  /** Puts a message back: at the head (release, crash) or after `delayMs` at the tail (retry). */
  requeue(destination: string, groupName: string, queued: QueuedMessage, delayMs?: number): void {
    const group = this.group(destination, groupName);
    if (delayMs === undefined) {
      group.ready.unshift(queued);
      group.dispatch();
      return;
    }
    group.delayed += 1;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      group.delayed -= 1;
      group.ready.push(queued);
      group.dispatch();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Lets subscribers with freed slots take more. */
  dispatch(destination: string, groupName: string): void {
    this.group(destination, groupName).dispatch();
  }

  stats(destination: string, groupName = 'default'): MemoryQueueStats {
    const group = this.groups.get(destination)?.get(groupName);
    if (!group) {
      return { ready: this.held.get(destination)?.length ?? 0, inFlight: 0, delayed: 0 };
    }
    return { ready: group.ready.length, inFlight: group.inFlight, delayed: group.delayed };
  }

  private group(destination: string, groupName: string): Group {
    let groups = this.groups.get(destination);
    if (!groups) {
      groups = new Map();
      this.groups.set(destination, groups);
    }
    let group = groups.get(groupName);
    if (!group) {
      group = new Group();
      groups.set(groupName, group);
      const held = this.held.get(destination);
      if (held) {
        group.ready.push(...held);
        this.held.delete(destination);
      }
    }
    return group;
  }
}

export interface MemoryQueueStats {
  /** Waiting to be delivered. */
  ready: number;
  /** Delivered, not settled yet. */
  inFlight: number;
  /** Waiting out a retry delay. */
  delayed: number;
}

/** Creates the broker several `memoryTransport({ broker })` instances share. */
export function memoryBroker(): MemoryBroker {
  return new MemoryBroker();
}

function fresh(stored: StoredMessage): QueuedMessage {
  return { stored, attempts: 0, redelivered: false };
}

/** The incoming view of a queued message for one delivery. */
export function toIncoming(queued: QueuedMessage, source: string): IncomingMessage {
  const { stored } = queued;
  return {
    requestId: stored.requestId,
    body: stored.body,
    headers: { ...stored.headers },
    source,
    publishedAt: stored.publishedAt,
    attempt: queued.attempts,
    attemptSource: 'exact',
    redelivered: queued.redelivered,
    raw: stored,
    ...(stored.key === undefined ? {} : { key: stored.key }),
    ...(stored.contentType === undefined ? {} : { contentType: stored.contentType }),
  };
}
