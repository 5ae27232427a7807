import type { FetchedMessage } from './client.js';
import { OffsetQueue } from './offsetQueue.js';
import { Watermark } from './watermark.js';

/** A fetched message while the transport holds it. */
export interface LaneMessage {
  readonly offset: bigint;
  readonly record: FetchedMessage;
  /** Arrival order across the subscription: breaks timestamp ties when picking what goes next. */
  readonly seq: number;
  /** When it was produced (epoch ms): partitions hand out their oldest message first. */
  readonly timestampMs: number;
  /** The attempt of its next delivery, as this process counts it. */
  attempt: number;
  /** Delivered before (by this process, or found on a retry topic). */
  redelivered: boolean;
  /** Not to be handed out before this epoch-ms time (retry topics); 0 = at once. */
  notBefore: number;
  /** Another group's retry record: passed over, and done at once. */
  foreign?: boolean;
}

/**
 * `active`: deliveries may be settled and offsets committed. `closing`: the subscription is
 * closing; deliveries can no longer be settled but what is done may still be committed.
 * `revoked`: the partition is gone; nothing of it is ever committed again.
 */
export type LaneState = 'active' | 'closing' | 'revoked';

export interface LaneSettings {
  /** Most messages of this partition handed out at once. 1 keeps the partition in order. */
  concurrency: number;
}

/**
 * One assigned partition: the messages fetched and not handed out yet (in offset order), how many
 * are out, and the watermark of what may be committed. Messages go out in offset order; with
 * `concurrency` 1 the next one waits until the previous one is settled, and a message waiting out
 * a retry delay blocks the partition (Kafka's order is kept). Above 1, settlements come back in any
 * order, a delayed retry steps aside, and only the contiguous done prefix is committed.
 */
export class PartitionLane {
  state: LaneState = 'active';
  /**
   * The partition's end when this member took it over: messages below it may have been delivered
   * to the previous owner. Undefined until known; nothing is handed out before.
   */
  takeoverEnd: bigint | undefined;
  /** The last offset committed for this partition by this member. */
  committed: bigint | undefined;
  /** Fetching is paused because the buffer is full. */
  paused = false;
  private readonly queue = new OffsetQueue<LaneMessage>();
  private watermark: Watermark | undefined;
  private out = 0;
  private held = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly topic: string,
    readonly partition: number,
    /** The source the messages belong to (a retry topic's messages belong to its source). */
    readonly source: string,
    readonly isRetryTopic: boolean,
    private readonly settings: LaneSettings,
  ) {}

  /** Messages fetched and not handed out. */
  get buffered(): number {
    return this.queue.length;
  }

  /** Messages handed out and not settled. */
  get inFlight(): number {
    return this.out;
  }

  /** One past the last record fetched, once anything was. */
  get fetchedEnd(): bigint | undefined {
    return this.watermark?.end;
  }

  /** The offset that may be committed now, once anything was fetched. */
  get committable(): bigint | undefined {
    return this.watermark?.committable;
  }

  /** Whether the watermark moved past what was last committed. */
  get needsCommit(): boolean {
    const committable = this.committable;
    return committable !== undefined && committable !== this.committed;
  }

  /**
   * Takes in fetched messages; those at offsets already fetched (a refetch after a rejoin) are
   * dropped, foreign ones are done at once. `lastOffset` is the batch's last record, which may be
   * a control record. Returns how many were queued.
   */
  accept(messages: readonly LaneMessage[], lastOffset: bigint): number {
    let accepted = 0;
    for (const message of messages) {
      if (!this.watermark) {
        this.watermark = new Watermark(message.offset);
        this.committed = message.offset;
      }
      if (!this.watermark.add(message.offset)) continue;
      if (message.foreign) {
        this.watermark.complete(message.offset);
        continue;
      }
      this.queue.push(message);
      accepted += 1;
    }
    this.watermark?.skipTo(lastOffset + 1n);
    return accepted;
  }

  /**
   * The message that may be handed out now; or the epoch-ms time when the next one may (a retry
   * topic's not-before); or undefined when none can go.
   */
  next(nowMs: number): LaneMessage | number | undefined {
    if (this.state !== 'active' || this.takeoverEnd === undefined) return undefined;
    const { concurrency } = this.settings;
    // In order (concurrency 1), a message waiting out its retry delay still holds the partition.
    const busy = this.out + (concurrency === 1 ? this.held : 0);
    if (busy >= concurrency) return undefined;
    const head = this.queue.peek();
    if (!head) return undefined;
    return head.notBefore > nowMs ? head.notBefore : head;
  }

  /** Hands out the message `next` returned. */
  take(): LaneMessage {
    const head = this.queue.shift();
    if (!head) throw new Error('PartitionLane.take() with nothing to take');
    this.out += 1;
    return head;
  }

  /** A handed-out message is done. True when the committable offset moved. */
  complete(message: LaneMessage): boolean {
    this.out -= 1;
    return this.watermark?.complete(message.offset) ?? false;
  }

  /** A handed-out message comes back at once, in offset order. */
  giveBack(message: LaneMessage): void {
    this.out -= 1;
    this.queue.insert(message);
  }

  /** A handed-out message comes back after `delayMs`; `onDue` runs when it is back. */
  hold(message: LaneMessage, delayMs: number, onDue: () => void): void {
    this.out -= 1;
    this.held += 1;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.held -= 1;
      this.queue.insert(message);
      onDue();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Ends the lane: pending delays are dropped and so is the buffer. */
  end(state: Exclude<LaneState, 'active'>): void {
    if (this.state === 'revoked') return;
    this.state = state;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held = 0;
    this.queue.clear();
  }
}
