/**
 * A FIFO with a cheap `shift`: an array read from a moving head, compacted once the consumed
 * part is the larger half. `Array.prototype.shift` moves every element, which makes draining a
 * long queue quadratic.
 */
export class ReadyQueue<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(...items: T[]): void {
    for (const item of items) this.items.push(item);
  }

  /** Puts an item back at the front (a message given back is the next one out). */
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined as T; // let it be collected
    this.head += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
