/**
 * The commit position of one partition: Kafka keeps one offset per partition (a watermark), not an
 * ack per message, so an offset may only be committed once every message before it is done.
 *
 * Offsets are added in increasing order as they are fetched, with gaps where the log has no
 * message (compaction, transaction markers); they are completed in any order. `committable` is
 * what Kafka expects in a commit: the next offset to read, i.e. the first offset not done yet, or
 * the end of what was fetched when everything is done.
 *
 * @example
 * const mark = new Watermark(10n);
 * mark.add(10n); mark.add(11n); mark.add(14n);
 * mark.complete(11n); // false: 10 is still open, an out-of-order ack waits
 * mark.complete(10n); // true: committable is now 14
 */
export class Watermark {
  /** Offsets added, in order; those before `head` are done. */
  private readonly added: bigint[] = [];
  private head = 0;
  private readonly open = new Set<bigint>();
  private fetchedEnd: bigint;

  /** @param start the partition's position when tracking began (its committed offset) */
  constructor(start: bigint) {
    this.fetchedEnd = start;
  }

  /** One past the last record fetched. */
  get end(): bigint {
    return this.fetchedEnd;
  }

  /** The offset to commit: every message below it is done. */
  get committable(): bigint {
    return this.head < this.added.length ? (this.added[this.head] as bigint) : this.fetchedEnd;
  }

  /** Messages added and not completed yet. */
  get outstanding(): number {
    return this.open.size;
  }

  /** Whether `offset` was added and is not done. */
  isOpen(offset: bigint): boolean {
    return this.open.has(offset);
  }

  /** Tracks a fetched message. Offsets must increase; an offset below `end` is refused. */
  add(offset: bigint): boolean {
    if (offset < this.fetchedEnd) return false;
    this.added.push(offset);
    this.open.add(offset);
    this.fetchedEnd = offset + 1n;
    return true;
  }

  /**
   * Moves the fetched end past records that carry no message (a transaction's control record at
   * the end of a batch), so that they do not hold the commit back once everything else is done.
   */
  skipTo(endExclusive: bigint): void {
    if (endExclusive > this.fetchedEnd) this.fetchedEnd = endExclusive;
  }

  /** Marks `offset` done; true when `committable` moved. Unknown or repeated offsets change nothing. */
  complete(offset: bigint): boolean {
    if (!this.open.delete(offset)) return false;
    const before = this.head;
    while (this.head < this.added.length && !this.open.has(this.added[this.head] as bigint)) {
      this.head += 1;
    }
    const moved = this.head !== before;
    // Drop the done prefix now and then, so a long-lived partition does not grow the array.
    if (this.head > 1024 && this.head * 2 > this.added.length) {
      this.added.splice(0, this.head);
      this.head = 0;
    }
    return moved;
  }
}
