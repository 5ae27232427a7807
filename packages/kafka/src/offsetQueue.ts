/**
 * Messages in offset order, taken from the front in constant time: `Array.prototype.shift`
 * copies the array, and a lane holds every message of its fetches until they are handed out.
 */
export class OffsetQueue<M extends { readonly offset: bigint }> {
  private items: (M | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** The first message, without taking it. */
  peek(): M | undefined {
    return this.items[this.head];
  }

  /** Appends a message at least as late as every other. */
  push(message: M): void {
    this.items.push(message);
  }

  shift(): M | undefined {
    if (this.head >= this.items.length) return undefined;
    const message = this.items[this.head];
    // Dropped, so a taken message is not kept alive until the next compaction.
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.items.length) this.clear();
    else if (this.head >= 1024 && this.head * 2 >= this.items.length) this.compact();
    return message;
  }

  /** Puts a message back at its place in offset order. */
  insert(message: M): void {
    let at = this.items.length;
    while (at > this.head && (this.items[at - 1] as M).offset > message.offset) at -= 1;
    this.items.splice(at, 0, message);
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }

  private compact(): void {
    this.items = this.items.slice(this.head);
    this.head = 0;
  }
}
