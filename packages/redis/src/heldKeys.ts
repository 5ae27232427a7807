/** A claim this store holds: its id, and the record key hashed from it. */
interface Held {
  scope: string;
  requestId: string;
  key: string;
}

/**
 * The record key of each claim this store holds, by owner token, so the claim's completion (or
 * failure, renewal, release) reuses it instead of hashing the id a second time. Only a cache:
 * an id that does not match the one claimed under the token, or a token it no longer holds, is
 * hashed again, so a caller mixing tokens up still reaches the record it named (and is refused
 * there). A claim that never ends (its completion failed for good, or a caller of the store that
 * claims and walks away) stays until the map reaches `limit` entries, which empties it: at most
 * a few MB, and far more claims than one process keeps in flight.
 */
export class HeldKeys {
  private readonly byToken = new Map<string, Held>();

  constructor(private readonly limit = 10_000) {}

  hold(token: string, scope: string, requestId: string, key: string): void {
    if (this.byToken.size >= this.limit) this.byToken.clear();
    this.byToken.set(token, { scope, requestId, key });
  }

  /** The key claimed under `token`, if it was claimed for this id. */
  get(token: string, scope: string, requestId: string): string | undefined {
    const held = this.byToken.get(token);
    return held && held.requestId === requestId && held.scope === scope ? held.key : undefined;
  }

  /** As `get`, and forgets the claim: it ends here. */
  take(token: string, scope: string, requestId: string): string | undefined {
    const key = this.get(token, scope, requestId);
    if (key !== undefined) this.byToken.delete(token);
    return key;
  }
}
