/**
 * Keeps up to `size` publishes in flight: a broker that answers each publish over the network
 * (SQS: one HTTP call each) would otherwise make the demo wait for every answer in turn.
 * The first failure is kept and thrown by the next `add` or by `drain`, so none goes unseen.
 */
export class PublishWindow {
  readonly #pending = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('size must be an integer ≥ 1');
  }

  /** Starts `publish`, after waiting for a free slot when `size` are in flight. */
  async add(publish: () => Promise<void>): Promise<void> {
    while (this.#pending.size >= this.size) await Promise.race(this.#pending);
    this.#throwIfFailed();
    const running = publish().then(
      () => {
        this.#pending.delete(running);
      },
      (error: unknown) => {
        this.#pending.delete(running);
        this.#failure ??= { error };
      },
    );
    this.#pending.add(running);
  }

  /** Waits for every publish started; throws the first failure. */
  async drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.race(this.#pending);
    this.#throwIfFailed();
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}
