import type { Logger } from '@idemq/core';

export interface SweeperOptions {
  /**
   * Time between sweeps.
   * @default 60000
   */
  intervalMs?: number;
  /**
   * Most records deleted per statement; a sweep repeats while a batch comes back full.
   * @default 1000
   */
  batchSize?: number;
}

export const SWEEPER_DEFAULTS = Object.freeze({ intervalMs: 60_000, batchSize: 1_000 });

/** Deletes expired records on an interval, in bounded batches, without keeping the process up. */
export class Sweeper {
  private readonly timer: NodeJS.Timeout;
  private running = false;

  constructor(
    options: SweeperOptions,
    private readonly sweepBatch: (batchSize: number) => Promise<number>,
    private readonly logger: Logger,
  ) {
    const intervalMs = options.intervalMs ?? SWEEPER_DEFAULTS.intervalMs;
    const batchSize = options.batchSize ?? SWEEPER_DEFAULTS.batchSize;
    this.timer = setInterval(() => void this.run(batchSize), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async run(batchSize: number): Promise<void> {
    // One sweep at a time: a slow one must not pile up behind the next tick.
    if (this.running) return;
    this.running = true;
    try {
      let deleted = batchSize;
      while (deleted === batchSize) deleted = await this.sweepBatch(batchSize);
    } catch (error) {
      this.logger.warn({ err: error }, 'idemq postgres sweep failed; the next one tries again');
    } finally {
      this.running = false;
    }
  }
}
