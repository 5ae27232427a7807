import { describe, expect, it } from 'vitest';
import {
  capText,
  DeadLetterHeaders,
  deadLetterHeaders,
  MAX_DEAD_LETTER_REASON_CHARS,
} from './deadLetterHeaders.js';
import { WireNames } from './wireNames.js';

const delivered = { source: 'payments', attempts: 3 };

describe('deadLetterHeaders', () => {
  it('writes the reason, the code, the attempts and the source', () => {
    expect(
      deadLetterHeaders({ reason: 'boom', code: 'IDEMQ_ERR_X', attempts: 5 }, delivered),
    ).toEqual({
      'x-idemq-reason': 'boom',
      'x-idemq-code': 'IDEMQ_ERR_X',
      'x-idemq-attempts': '5',
      'x-idemq-source': 'payments',
    });
  });

  it("counts the delivery's attempts when the engine gave none", () => {
    expect(deadLetterHeaders({ reason: 'r' }, delivered)[DeadLetterHeaders.attempts]).toBe('3');
  });

  it('leaves the code out when there is none, never an empty header', () => {
    expect(deadLetterHeaders({ reason: 'r' }, delivered)).not.toHaveProperty(
      DeadLetterHeaders.code,
    );
    expect(deadLetterHeaders({ reason: 'r', code: '' }, delivered)).not.toHaveProperty(
      DeadLetterHeaders.code,
    );
  });

  it('caps a long reason, marked with an ellipsis', () => {
    const reason = deadLetterHeaders({ reason: 'x'.repeat(10_000) }, delivered)[
      DeadLetterHeaders.reason
    ];
    expect(reason).toHaveLength(MAX_DEAD_LETTER_REASON_CHARS);
    expect(reason?.endsWith('…')).toBe(true);
  });

  it('uses the wire names', () => {
    expect(DeadLetterHeaders).toEqual({
      reason: WireNames.reason,
      code: WireNames.code,
      attempts: WireNames.attempts,
      source: WireNames.source,
    });
  });
});

describe('capText', () => {
  it('leaves short text alone and cuts long text to the cap', () => {
    expect(capText('short', 4_096)).toBe('short');
    expect(capText('x'.repeat(4_096), 4_096)).toBe('x'.repeat(4_096));
    const capped = capText('x'.repeat(10_000), 4_096);
    expect(capped).toHaveLength(4_096);
    expect(capped.endsWith('…')).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    // 'a' then emoji: the cut after 4 code units would fall inside the second emoji.
    const capped = capText('a😀😀😀', 5);
    expect(capped).toBe('a😀…');
    expect(capped.isWellFormed()).toBe(true);
  });
});
