import type { ResultOmission } from '@idemq/core';
import { KeyFilter } from './keyFilter.js';

/**
 * An in-process cache of ids Redis answered as COMPLETED, so repeated duplicates cost no round
 * trip. Keys are record keys (see `KeyFilter`).
 * Entries live at most `ttlMs` (and never past the record's own TTL); it holds the last
 * `maxEntries` ids remembered, the oldest evicted first. A cached id answered for a different
 * payload fingerprint is a miss, so key reuse is still decided by Redis.
 *
 * Eviction order is kept in a ring of `maxEntries` slots rather than by the Map's own insertion
 * order: finding a Map's oldest key (`keys().next()`) walks past every entry deleted since the
 * Map last rehashed, so a full cache slowed down as it ran (docs/performance-history.md); a slot
 * is O(1).
 *
 * An entry is its slot: the Map holds key → slot (a small integer), and the slot's fields live in
 * arrays indexed by it (times in arrays of unboxed doubles). Remembering an id allocates nothing
 * the cache keeps but the Map's own entry, where an object per entry (and a box per time in it)
 * was promoted and traced by every GC; and no entry object is built with a spread, which on V8 11
 * (Node 20) gave each object a hidden class of its own and made every read of one megamorphic.
 */
export class CompletedCache {
  /** Key → the slot that holds its entry. */
  private readonly entries = new Map<string, number>();
  /** The keys of `entries`, so a lookup of an absent key rarely touches the Map. */
  private readonly filter: KeyFilter;
  /** `keys[i]`: the key last remembered in slot i; it still owns it if `entries` says so. */
  private readonly keys: string[] = [];
  private readonly fingerprints: (string | undefined)[] = [];
  private readonly results: (string | undefined)[] = [];
  private readonly omitted: (ResultOmission | undefined)[] = [];
  /** Doubles only (never a hole or `undefined`), so V8 keeps them unboxed. */
  private readonly completedAts: number[] = [];
  private readonly untils: number[] = [];
  private nextSlot = 0;
  hits = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {
    this.filter = new KeyFilter(maxEntries);
  }

  remember(key: string, completion: Omit<CachedCompletion, 'until'>, recordTtlMs: number): void {
    const slot = this.nextSlot;
    this.nextSlot = slot + 1 === this.maxEntries ? 0 : slot + 1;
    // The slot's previous key is the oldest remembered; evict it unless it moved to a newer slot.
    const previous = this.keys[slot];
    if (previous !== undefined && this.entries.get(previous) === slot) this.forget(previous);
    // Slots fill in order, so each array stays dense (a push, then writes in place).
    this.keys[slot] = key;
    this.fingerprints[slot] = completion.fingerprint;
    this.results[slot] = completion.result;
    this.omitted[slot] = completion.resultOmitted;
    this.completedAts[slot] = completion.completedAt;
    this.untils[slot] = performance.now() + Math.min(this.ttlMs, recordTtlMs);
    if (!this.entries.has(key)) this.filter.add(key);
    this.entries.set(key, slot);
  }

  get(key: string, fingerprint: string | undefined): CachedCompletion | undefined {
    if (!this.filter.mayHold(key)) return undefined;
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    const until = this.untils[slot] as number;
    if (until <= performance.now()) {
      this.forget(key);
      return undefined;
    }
    const held = this.fingerprints[slot];
    if (held !== undefined && fingerprint !== undefined && held !== fingerprint) return undefined;
    this.hits += 1;
    return {
      fingerprint: held,
      completedAt: this.completedAts[slot] as number,
      result: this.results[slot],
      resultOmitted: this.omitted[slot],
      until,
    };
  }

  private forget(key: string): void {
    this.entries.delete(key);
    this.filter.remove(key);
  }

  /** Ids held now (expired ones included until they are looked up or evicted). */
  get size(): number {
    return this.entries.size;
  }
}

export interface CachedCompletion {
  fingerprint?: string | undefined;
  completedAt: number;
  result?: string | undefined;
  resultOmitted?: ResultOmission | undefined;
  /** performance.now() time after which the entry is stale. */
  until: number;
}
