import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Watermark } from './watermark.js';

describe('Watermark', () => {
  it('commits only the contiguous done prefix: an out-of-order ack waits for its predecessors', () => {
    const mark = new Watermark(10n);
    for (const offset of [10n, 11n, 12n]) mark.add(offset);
    expect(mark.committable).toBe(10n);
    expect(mark.complete(12n)).toBe(false);
    expect(mark.complete(11n)).toBe(false);
    expect(mark.committable).toBe(10n);
    expect(mark.complete(10n)).toBe(true);
    expect(mark.committable).toBe(13n);
  });

  it('skips gaps in the log (compaction, transaction markers)', () => {
    const mark = new Watermark(0n);
    mark.add(0n);
    mark.add(5n);
    mark.skipTo(8n); // a control record at 7
    mark.complete(0n);
    expect(mark.committable).toBe(5n);
    mark.complete(5n);
    expect(mark.committable).toBe(8n);
  });

  it('ignores unknown, repeated and already-fetched offsets', () => {
    const mark = new Watermark(3n);
    expect(mark.add(2n)).toBe(false);
    mark.add(3n);
    expect(mark.add(3n)).toBe(false);
    expect(mark.complete(9n)).toBe(false);
    expect(mark.complete(3n)).toBe(true);
    expect(mark.complete(3n)).toBe(false);
    expect(mark.committable).toBe(4n);
  });

  it('keeps working past its compaction threshold', () => {
    const mark = new Watermark(0n);
    for (let i = 0n; i < 5_000n; i++) mark.add(i);
    for (let i = 0n; i < 4_999n; i++) mark.complete(i);
    expect(mark.committable).toBe(4_999n);
    expect(mark.outstanding).toBe(1);
    mark.complete(4_999n);
    expect(mark.committable).toBe(5_000n);
  });

  it('property: committable is the first open offset (or the end), never decreases, never passes an open one', () => {
    const scenario = fc.record({
      start: fc.bigInt({ min: 0n, max: 2n ** 62n }),
      gaps: fc.array(fc.bigInt({ min: 1n, max: 5n }), { minLength: 0, maxLength: 60 }),
      order: fc.array(fc.nat(), { maxLength: 80 }),
      tail: fc.bigInt({ min: 0n, max: 3n }),
    });
    fc.assert(
      fc.property(scenario, ({ start, gaps, order, tail }) => {
        const mark = new Watermark(start);
        const offsets: bigint[] = [];
        let next = start;
        for (const gap of gaps) {
          expect(mark.add(next)).toBe(true);
          offsets.push(next);
          next += gap;
        }
        const end = (offsets.at(-1) ?? start - 1n) + 1n + tail;
        mark.skipTo(end);
        const open = new Set(offsets);
        let last = mark.committable;
        // Complete offsets in an arbitrary order, checking the invariants after each step.
        const remaining = [...offsets];
        for (const pick of [...order, ...offsets.map((_, i) => i)]) {
          if (remaining.length === 0) break;
          const [offset] = remaining.splice(pick % remaining.length, 1) as [bigint];
          const before = mark.committable;
          const moved = mark.complete(offset);
          open.delete(offset);
          const lowestOpen = [...open].reduce<bigint | undefined>(
            (min, o) => (min === undefined || o < min ? o : min),
            undefined,
          );
          expect(mark.committable).toBe(lowestOpen ?? end);
          expect(moved).toBe(mark.committable !== before);
          expect(mark.committable >= last).toBe(true);
          for (const o of open) expect(mark.committable <= o).toBe(true);
          last = mark.committable;
        }
        expect(mark.outstanding).toBe(0);
        expect(mark.committable).toBe(end);
      }),
      { numRuns: 300 },
    );
  });
});
