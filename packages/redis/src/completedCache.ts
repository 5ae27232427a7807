import type { ResultOmission } from '@idemq/core';

/**
 * An in-process cache of ids this process saw COMPLETED, so hot duplicates cost no round trip.
 * Entries live at most `ttlMs` (and never past the record's own TTL); it holds the last
 * `maxEntries` ids remembered, the oldest evicted first. A cached id answered for a different
 * payload fingerprint is a miss, so key reuse is still decided by Redis.
 *
 * Eviction order is kept in a ring of `maxEntries` slots rather than by the Map's own insertion
 * order: finding a Map's oldest key (`keys().next()`) walks past every entry deleted since the
 * Map last rehashed, so a full cache slowed down as it ran (docs/performance-history.md); a slot
 * is O(1).
 */
export class CompletedCache {
  private readonly entries = new Map<string, Entry>();
  /** `slots[i]`: the key last remembered in slot i; it still owns it if its entry says so. */
  private readonly slots: string[] = [];
  private nextSlot = 0;
  hits = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  remember(key: string, completion: Omit<CachedCompletion, 'until'>, recordTtlMs: number): void {
    const slot = this.nextSlot;
    this.nextSlot = slot + 1 === this.maxEntries ? 0 : slot + 1;
    // The slot's previous key is the oldest remembered; evict it unless it moved to a newer slot.
    const previous = this.slots[slot];
    if (previous !== undefined && this.entries.get(previous)?.slot === slot)
      this.entries.delete(previous);
    this.slots[slot] = key;
    const until = performance.now() + Math.min(this.ttlMs, recordTtlMs);
    this.entries.set(key, { ...completion, until, slot });
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

  /** Ids held now (expired ones included until they are looked up or evicted). */
  get size(): number {
    return this.entries.size;
  }
}

export interface CachedCompletion {
  fingerprint?: string;
  completedAt: number;
  result?: string;
  resultOmitted?: ResultOmission;
  /** performance.now() time after which the entry is stale. */
  until: number;
}

interface Entry extends CachedCompletion {
  /** The ring slot that holds this key's place in the eviction order. */
  slot: number;
}
