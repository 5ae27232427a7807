/**
 * An in-process cache of ids this process saw COMPLETED, so hot duplicates cost no round trip.
 * Entries live at most `ttlMs` (and never past the record's own TTL); the oldest is evicted
 * past `maxEntries`. A cached id answered for a different payload fingerprint is a miss, so
 * key reuse is still decided by Redis.
 */
export class CompletedCache {
  private readonly entries = new Map<string, CachedCompletion>();
  hits = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  remember(key: string, completion: Omit<CachedCompletion, 'until'>, recordTtlMs: number): void {
    const until = performance.now() + Math.min(this.ttlMs, recordTtlMs);
    this.entries.delete(key);
    this.entries.set(key, { ...completion, until });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get(key: string, fingerprint: string | undefined): CachedCompletion | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= performance.now()) {
      this.entries.delete(key);
      return undefined;
    }
    if (
      entry.fingerprint !== undefined &&
      fingerprint !== undefined &&
      entry.fingerprint !== fingerprint
    ) {
      return undefined;
    }
    this.hits += 1;
    return entry;
  }
}

export interface CachedCompletion {
  fingerprint?: string;
  completedAt: number;
  result?: string;
  /** performance.now() time after which the entry is stale. */
  until: number;
}
