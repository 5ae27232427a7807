/**
 * The chunks a route writes, read as an async iterable by whoever sends or stores them. Past
 * `highWaterMark` queued bytes `hasRoom()` is false; `onDrain` runs once the reader caught up, so
 * that a route writing pipe-style waits for its reader.
 */
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private queuedBytes = 0;
  private closed = false;
  private readerGone = false;
  private full = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly highWaterMark: number,
    private readonly onDrain: () => void,
  ) {}

  push(chunk: Uint8Array): void {
    if (this.closed || this.readerGone || chunk.byteLength === 0) return;
    this.chunks.push(chunk);
    this.queuedBytes += chunk.byteLength;
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /** False once the reader is behind by `highWaterMark` bytes: the writer should wait for drain. */
  hasRoom(): boolean {
    if (this.readerGone || this.queuedBytes < this.highWaterMark) return true;
    this.full = true;
    return false;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk !== undefined) {
          this.queuedBytes -= chunk.byteLength;
          this.drained();
          yield chunk;
          continue;
        }
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      // The reader left early (client gone, body over the limit read elsewhere): stop holding.
      this.readerGone = true;
      this.chunks.length = 0;
      this.drained();
    }
  }

  private drained(): void {
    if (this.full && (this.readerGone || this.queuedBytes < this.highWaterMark)) {
      this.full = false;
      this.onDrain();
    }
  }
}
