import { describe, expect, it } from 'vitest';
import { orderedWaves } from './orderedWaves.js';

interface Claim {
  key: string;
  settings: string;
}

const waves = (claims: Claim[]) =>
  orderedWaves(
    claims,
    (c) => c.key,
    (c) => c.settings,
  ).map((wave) => wave.map((c) => `${c.key}/${c.settings}`));

describe('orderedWaves', () => {
  it('keeps a batch without repeats, or with repeats of the same settings, in one wave', () => {
    expect(waves([])).toEqual([]);
    expect(
      waves([
        { key: 'a', settings: 's' },
        { key: 'b', settings: 't' },
        { key: 'a', settings: 's' },
      ]),
    ).toEqual([['a/s', 'b/t', 'a/s']]);
  });

  it('sends a repeat with other settings than its previous claim in a later wave', () => {
    expect(
      waves([
        { key: 'b', settings: 't' },
        { key: 'a', settings: 's' },
        { key: 'a', settings: 't' },
        { key: 'a', settings: 't' },
        { key: 'a', settings: 's' },
        { key: 'c', settings: 's' },
      ]),
    ).toEqual([['b/t', 'a/s', 'c/s'], ['a/t', 'a/t'], ['a/s']]);
  });
});
