/**
 * The side effect of the payments API (over HTTP or gRPC), kept outside the idempotency layer:
 * what was charged.
 */

/** One charge, as the route or the gRPC handler made it. */
export interface Charge {
  chargeId: string;
  paymentId: string;
  amountCents: number;
}

/** What the clients finally got for one payment. */
export interface ClientOutcome {
  paymentId: string;
  /** The chargeId of the 2xx answer the client ended with; undefined when it got none. */
  chargeId: string | undefined;
}

/** The verdict over the ledger and the clients' outcomes. */
export interface LedgerReport {
  /** Payments charged at least once. */
  charged: number;
  /** Payments charged more than once. Must be 0. */
  chargedTwice: string[];
  /** Payments whose client got no answer naming a charge made for that payment. Must be 0. */
  lost: string[];
}

/** Every charge the service made, in order. */
export class PaymentsLedger {
  private readonly charges = new Map<string, Charge[]>();
  private sequence = 0;

  /** The irreversible effect: appends a charge and returns it. */
  charge(paymentId: string, amountCents: number): Charge {
    this.sequence += 1;
    const charge = {
      chargeId: `ch_${String(this.sequence).padStart(6, '0')}`,
      paymentId,
      amountCents,
    };
    const list = this.charges.get(paymentId) ?? [];
    list.push(charge);
    this.charges.set(paymentId, list);
    return charge;
  }

  get totalCharges(): number {
    return this.sequence;
  }

  /** Checks the charges against what every client ended with. */
  report(outcomes: readonly ClientOutcome[]): LedgerReport {
    const chargedTwice: string[] = [];
    for (const [paymentId, list] of this.charges) {
      if (list.length > 1) chargedTwice.push(paymentId);
    }
    const lost: string[] = [];
    for (const { paymentId, chargeId } of outcomes) {
      const list = this.charges.get(paymentId) ?? [];
      if (chargeId === undefined || !list.some((charge) => charge.chargeId === chargeId)) {
        lost.push(paymentId);
      }
    }
    return { charged: this.charges.size, chargedTwice, lost };
  }
}
