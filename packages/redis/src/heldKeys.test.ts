import { describe, expect, it } from 'vitest';
import { HeldKeys } from './heldKeys.js';

describe('HeldKeys', () => {
  it('gives the key held under a token only for the id it was claimed for', () => {
    const held = new HeldKeys();
    held.hold('t1', 'billing', 'r1', 'k1');
    expect(held.get('t1', 'billing', 'r1')).toBe('k1');
    expect(held.get('t1', 'billing', 'r2')).toBeUndefined();
    expect(held.get('t1', 'shipping', 'r1')).toBeUndefined();
    expect(held.get('t2', 'billing', 'r1')).toBeUndefined();
  });

  it('forgets a claim once it is taken, and only when the id matches', () => {
    const held = new HeldKeys();
    held.hold('t1', 'billing', 'r1', 'k1');
    expect(held.take('t1', 'billing', 'r2')).toBeUndefined();
    expect(held.take('t1', 'billing', 'r1')).toBe('k1');
    expect(held.get('t1', 'billing', 'r1')).toBeUndefined();
  });

  it('empties itself at its limit rather than grow without bound', () => {
    const held = new HeldKeys(2);
    held.hold('t1', 's', 'r1', 'k1');
    held.hold('t2', 's', 'r2', 'k2');
    held.hold('t3', 's', 'r3', 'k3');
    expect(held.get('t1', 's', 'r1')).toBeUndefined();
    expect(held.get('t2', 's', 'r2')).toBeUndefined();
    expect(held.get('t3', 's', 'r3')).toBe('k3');
  });
});
