import { describe, expect, it } from 'vitest';
import { GroupGate } from './groupGate.js';

/** Items are names; `stale` lists the ones whose visibility lapsed. */
function gate(stale: Set<string> = new Set()) {
  return new GroupGate<string>((item) => stale.has(item));
}

const goes = (item: string) => ({ next: item, giveBack: [] });
const waits = { next: undefined, giveBack: [] };

describe('GroupGate', () => {
  it('lets one message per group out; the rest wait in order', () => {
    const g = gate();
    expect(g.admit('a', 'a1')).toEqual(goes('a1'));
    expect(g.admit('a', 'a2')).toEqual(waits);
    expect(g.admit('b', 'b1')).toEqual(goes('b1'));
    expect(g.admit('a', 'a3')).toEqual(waits);
    expect(g.waiting).toBe(2);
    expect(g.settled('a', 'a1', 'removed')).toEqual(goes('a2'));
    expect(g.settled('a', 'a2', 'removed')).toEqual(goes('a3'));
    expect(g.settled('a', 'a3', 'removed')).toEqual(waits);
    expect(g.waiting).toBe(0);
    // The group is free again.
    expect(g.admit('a', 'a4')).toEqual(goes('a4'));
  });

  it('gives back everything behind a message that returns (retry, release, lost lease)', () => {
    const g = gate();
    g.admit('a', 'a1');
    g.admit('a', 'a2');
    g.admit('a', 'a3');
    expect(g.settled('a', 'a1', 'returned')).toEqual({ next: undefined, giveBack: ['a2', 'a3'] });
    expect(g.waiting).toBe(0);
    expect(g.admit('a', 'a1-again')).toEqual(goes('a1-again'));
  });

  it('passes the turn on when the message in hand went stale, instead of deadlocking the group', () => {
    const stale = new Set<string>();
    const g = gate(stale);
    g.admit('a', 'a1');
    g.admit('a', 'a2');
    stale.add('a1'); // its visibility lapsed: SQS redelivers the group
    expect(g.admit('a', 'a1-again')).toEqual({ next: 'a1-again', giveBack: ['a2'] });
    expect(g.waiting).toBe(0);
    // The stale copy settling late changes nothing for the new one.
    expect(g.settled('a', 'a1', 'removed')).toEqual(waits);
    expect(g.admit('a', 'a2-again')).toEqual(waits);
    expect(g.settled('a', 'a1-again', 'removed')).toEqual(goes('a2-again'));
  });

  it('drains every waiting message on stop, keeping the groups in hand blocked', () => {
    const g = gate();
    g.admit('a', 'a1');
    g.admit('a', 'a2');
    g.admit('b', 'b1');
    g.admit('b', 'b2');
    expect(g.drain().sort()).toEqual(['a2', 'b2']);
    expect(g.waiting).toBe(0);
    expect(g.admit('a', 'late')).toEqual(waits);
    expect(g.drain()).toEqual(['late']);
    expect(g.settled('a', 'a1', 'removed')).toEqual(waits);
  });
});
