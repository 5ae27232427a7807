import { describe, expect, it } from 'vitest';
import { OwnerTokens } from './ownerTokens.js';

describe('OwnerTokens', () => {
  it('never repeats a token, within a store or across stores, and keeps them short', () => {
    const stores = [new OwnerTokens(), new OwnerTokens(), new OwnerTokens()];
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      for (const tokens of stores) {
        const token = tokens.next();
        expect(seen.has(token)).toBe(false);
        seen.add(token);
      }
    }
    expect(seen.size).toBe(60_000);
    for (const token of seen) expect(token.length).toBeLessThanOrEqual(36);
    // Each store draws its own random prefix.
    expect(new Set([...seen].map((token) => token.split('.')[0])).size).toBe(3);
  });
});
