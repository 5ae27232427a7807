import { describe, expect, it } from 'vitest';
import { PaymentsLedger } from './paymentsLedger.js';

describe('PaymentsLedger', () => {
  it('passes one charge per payment, each named by its client', () => {
    const ledger = new PaymentsLedger();
    const a = ledger.charge('pay_a', 100);
    const b = ledger.charge('pay_b', 200);
    expect(
      ledger.report([
        { paymentId: 'pay_a', chargeId: a.chargeId },
        { paymentId: 'pay_b', chargeId: b.chargeId },
      ]),
    ).toEqual({ charged: 2, chargedTwice: [], lost: [] });
  });

  it('catches a payment charged twice', () => {
    const ledger = new PaymentsLedger();
    const first = ledger.charge('pay_a', 100);
    ledger.charge('pay_a', 100);
    const report = ledger.report([{ paymentId: 'pay_a', chargeId: first.chargeId }]);
    expect(report.chargedTwice).toEqual(['pay_a']);
    expect(report.lost).toEqual([]);
  });

  it('counts as lost a payment with no answer, or an answer naming another payment’s charge', () => {
    const ledger = new PaymentsLedger();
    const a = ledger.charge('pay_a', 100);
    const report = ledger.report([
      { paymentId: 'pay_b', chargeId: a.chargeId },
      { paymentId: 'pay_c', chargeId: undefined },
    ]);
    expect(report.lost).toEqual(['pay_b', 'pay_c']);
    expect(report.charged).toBe(1);
  });
});
