import type { SettledFate } from './delivery.js';

/** What the gate tells the subscription to do with the messages it held back. */
export interface GateDecision<T> {
  /** The group's next message, to hand out now. */
  next: T | undefined;
  /** Messages to give back to SQS (visibility 0), so it redelivers them in order. */
  giveBack: T[];
}

interface Group<T> {
  /** The message handed out for this group. */
  inHand: T;
  /** Messages of the group received after it, in order. */
  waiting: T[];
}

/**
 * Per-group turn-taking for FIFO queues. One `ReceiveMessage` can return several messages of one
 * group; handing them out together would let a later one finish (or be acked) before an earlier
 * one is retried, breaking the group's order. So a group has at most one message handed out; the
 * rest of its batch waits here, in order:
 * - the one in hand is removed (ack, reject) → the next waiting one goes;
 * - it comes back (retry, release, lost lease) → everything waiting is given back to SQS, which
 *   then redelivers the group in order, starting with the returning message.
 *
 * SQS redelivering a message of a group means the group's message in hand lost its visibility
 * (a handler slower than the lease, a stalled process): its turn is over. Holding the newcomer
 * behind it would deadlock the group — the stale one may never be settled — so `admit` passes
 * the turn on when `isStale` says the message in hand is no longer held.
 */
export class GroupGate<T> {
  private readonly groups = new Map<string, Group<T>>();
  private waitingCount = 0;

  constructor(private readonly isStale: (item: T) => boolean) {}

  /** Messages waiting for their turn. */
  get waiting(): number {
    return this.waitingCount;
  }

  /**
   * Whether `item` may be handed out now (`next` is then the item itself), and what to give back:
   * the messages waiting behind a stale message in hand, which SQS redelivers after `item`.
   */
  admit(group: string, item: T): GateDecision<T> {
    const current = this.groups.get(group);
    if (current && !this.isStale(current.inHand)) {
      current.waiting.push(item);
      this.waitingCount += 1;
      return { next: undefined, giveBack: [] };
    }
    const giveBack = current ? this.take(current.waiting) : [];
    this.groups.set(group, { inHand: item, waiting: [] });
    return { next: item, giveBack };
  }

  /**
   * The group's message `item` was settled: which message goes next, which go back. A message
   * whose turn already passed (it went stale and another took over) changes nothing.
   */
  settled(group: string, item: T, fate: SettledFate): GateDecision<T> {
    const current = this.groups.get(group);
    if (!current || current.inHand !== item) return { next: undefined, giveBack: [] };
    if (fate === 'removed') {
      const next = current.waiting.shift();
      if (next === undefined) {
        this.groups.delete(group);
      } else {
        this.waitingCount -= 1;
        current.inHand = next;
      }
      return { next, giveBack: [] };
    }
    this.groups.delete(group);
    return { next: undefined, giveBack: this.take(current.waiting) };
  }

  /** Takes every waiting message out (stop, close); groups in hand stay until settled. */
  drain(): T[] {
    const all: T[] = [];
    for (const group of this.groups.values()) all.push(...this.take(group.waiting));
    return all;
  }

  private take(waiting: T[]): T[] {
    const taken = waiting.splice(0);
    this.waitingCount -= taken.length;
    return taken;
  }
}
