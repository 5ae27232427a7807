import type { Logger } from '@idemq/core';
import type { OffsetCommit } from './client.js';
import type { PartitionLane } from './partitionWorker.js';

/** How long a failed commit waits before it is tried again. */
const RETRY_AFTER_MS = 250;

/**
 * Commits the watermarks of one subscription's partitions: coalesced (one OffsetCommit in flight;
 * what moved meanwhile goes in the next), and fenced (a revoked partition is never committed).
 *
 * Why every commit starts in its own macrotask: kafkajs installs the new generation's offset
 * manager in a microtask just before it reports the join. A commit started right after a network
 * reply could run in that gap, under the new generation, for a partition that has just moved to
 * another member. Starting from `setImmediate` it always runs before the rejoin began or after the
 * join was reported (and the lane revoked).
 */
export class Committer {
  private readonly dirty = new Set<PartitionLane>();
  private inFlight: Promise<void> | undefined;
  /** The next send: soon (an immediate) or after a failure (a timer). Never both. */
  private scheduled:
    | { kind: 'immediate'; handle: NodeJS.Immediate }
    | { kind: 'timer'; handle: NodeJS.Timeout }
    | undefined;
  private suspended = false;
  /** When the last commit was sent (`performance.now()`). */
  private lastSentAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly commit: (offsets: readonly OffsetCommit[]) => Promise<void>,
    private readonly logger: Logger,
    /** Least time between two commits sent by `request`; `commitNow` and `flush` do not wait. */
    private readonly minIntervalMs = 0,
  ) {}

  /** Commits `lane`'s watermark soon. */
  request(lane: PartitionLane): void {
    this.dirty.add(lane);
    this.schedule();
  }

  /** A rebalance began: nothing is committed until `resume` (commits would be refused anyway). */
  suspend(): void {
    this.suspended = true;
  }

  resume(): void {
    this.suspended = false;
    if (this.dirty.size > 0) this.schedule();
  }

  /**
   * Sends what is pending now, synchronously: for the moment a rebalance is announced, when the
   * ending generation can still commit.
   */
  commitNow(): void {
    if (this.inFlight) return;
    this.send();
  }

  /** Resolves once everything requested so far was committed or failed for good. Never rejects. */
  async flush(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await this.inFlight;
      if (!this.pendingCount()) return;
      this.suspended = false;
      this.clearSchedule();
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          this.send();
          resolve();
        }),
      );
    }
    await this.inFlight;
  }

  /** Stops scheduled work; what is in flight finishes. */
  close(): void {
    this.clearSchedule();
    this.dirty.clear();
  }

  private pendingCount(): number {
    let count = 0;
    for (const lane of this.dirty) if (lane.state !== 'revoked' && lane.needsCommit) count++;
    return count;
  }

  /**
   * Sends after `minDelayMs` at the least, and no sooner than `minIntervalMs` after the last
   * commit: each commit is a write on the broker, and what comes in meanwhile rides the next one.
   */
  private schedule(minDelayMs = 0): void {
    if (this.scheduled || this.inFlight || this.suspended) return;
    const waitMs = Math.max(minDelayMs, this.lastSentAt + this.minIntervalMs - performance.now());
    const sendNow = () => {
      this.scheduled = undefined;
      this.send();
    };
    if (waitMs <= 0) {
      this.scheduled = { kind: 'immediate', handle: setImmediate(sendNow) };
      return;
    }
    const handle = setTimeout(sendNow, Math.ceil(waitMs));
    handle.unref();
    this.scheduled = { kind: 'timer', handle };
  }

  private clearSchedule(): void {
    // Each handle goes to its own clear function: clearImmediate on a timer corrupts Node's
    // immediate queue (no later setImmediate runs).
    if (this.scheduled?.kind === 'immediate') clearImmediate(this.scheduled.handle);
    else if (this.scheduled?.kind === 'timer') clearTimeout(this.scheduled.handle);
    this.scheduled = undefined;
  }

  /** Takes the dirty lanes' watermarks and sends them as one commit. */
  private send(): void {
    if (this.inFlight || this.suspended) return;
    const lanes: PartitionLane[] = [];
    const offsets: OffsetCommit[] = [];
    for (const lane of this.dirty) {
      this.dirty.delete(lane);
      const offset = lane.committable;
      if (lane.state === 'revoked' || offset === undefined || offset === lane.committed) continue;
      lanes.push(lane);
      offsets.push({ topic: lane.topic, partition: lane.partition, offset: offset.toString() });
    }
    if (offsets.length === 0) return;
    this.lastSentAt = performance.now();
    this.inFlight = this.commit(offsets).then(
      () => {
        for (const [i, lane] of lanes.entries()) {
          const offset = BigInt((offsets[i] as OffsetCommit).offset);
          if (lane.committed === undefined || offset > lane.committed) lane.committed = offset;
        }
        this.done(false);
      },
      (error: unknown) => {
        this.logger.warn(
          { error: String(error), partitions: offsets.length },
          'idemq kafka: offset commit failed; the messages will be delivered again unless a later commit succeeds',
        );
        for (const lane of lanes) if (lane.state !== 'revoked') this.dirty.add(lane);
        this.done(true);
      },
    );
  }

  private done(failed: boolean): void {
    this.inFlight = undefined;
    if (this.dirty.size === 0 || this.suspended) return;
    this.schedule(failed ? RETRY_AFTER_MS : 0);
  }
}
