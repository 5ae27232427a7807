/**
 * Counts the keys a cache holds per bucket, the bucket taken from four characters of the key's
 * digest, so a lookup of a key nobody holds is one read of a small array instead of a probe of
 * a large `Map`, whose dependent memory reads dominate a cache that misses for most messages
 * (every first delivery; docs/performance-history.md).
 * Keys are record keys, `<prefix>:{<base64url digest>}`: the characters before the closing
 * brace are uniformly random. A bucket that is not empty may hold another key (a false
 * positive, then the `Map` decides); an empty one never holds the key.
 */
export class KeyFilter {
  private readonly counts: Int32Array;
  private readonly mask: number;

  /** About eight buckets per key the cache can hold, so few lookups of absent keys pass. */
  constructor(maxKeys: number) {
    const size = 2 ** Math.min(24, Math.max(10, Math.ceil(Math.log2(maxKeys * 8))));
    this.counts = new Int32Array(size);
    this.mask = size - 1;
  }

  add(key: string): void {
    const bucket = this.bucketOf(key);
    this.counts[bucket] = (this.counts[bucket] as number) + 1;
  }

  remove(key: string): void {
    const bucket = this.bucketOf(key);
    this.counts[bucket] = (this.counts[bucket] as number) - 1;
  }

  /** False when the key is surely not held. */
  mayHold(key: string): boolean {
    return (this.counts[this.bucketOf(key)] as number) > 0;
  }

  private bucketOf(key: string): number {
    const end = key.length - 2;
    return (
      (((key.charCodeAt(end) & 63) << 18) |
        ((key.charCodeAt(end - 1) & 63) << 12) |
        ((key.charCodeAt(end - 2) & 63) << 6) |
        (key.charCodeAt(end - 3) & 63)) &
      this.mask
    );
  }
}
