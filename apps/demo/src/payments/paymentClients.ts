/**
 * The clients of the payments API demos, whatever the transport (HTTP, gRPC): which payments they
 * make, how long the service takes over each, and the pool of clients that works through them.
 */
import { seededRandom } from '@idemq/core/testing';
import type { ClientOutcome } from './paymentsLedger.js';

/** One payment a client is asked to make. `seq` finds its planned duration and faults. */
export interface PaymentOrder {
  seq: number;
  paymentId: string;
  amountCents: number;
}

/** The payment numbered `seq`: the same id and amount on every run and every transport. */
export function paymentOrder(seq: number): PaymentOrder {
  return {
    seq,
    paymentId: `pay_${String(seq).padStart(6, '0')}`,
    amountCents: 100 + ((seq * 7919) % 99_900),
  };
}

/** The `seq` of a payment id made by `paymentOrder`; NaN for any other id. */
export function paymentSeq(paymentId: string): number {
  return /^pay_\d+$/.test(paymentId) ? Number(paymentId.slice('pay_'.length)) : Number.NaN;
}

/**
 * How long the service takes to charge each payment (the card network's latency), drawn once
 * from `seed`, uniformly from 0 to `maxMs`: the same seed gives the same durations.
 */
export function plannedDurations(seed: number, payments: number, maxMs: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: payments }, () => Math.round(random() * maxMs));
}

/** Full-jitter exponential backoff before retry `attempt + 1`: 0 to min(max, base × 2^(attempt − 1)). */
export function retryBackoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(Math.random() * cap);
}

export interface PaymentClientsOptions {
  /** Payments to make, `paymentOrder(0)` to `paymentOrder(payments - 1)`. */
  payments: number;
  /** Clients working at once, each one payment at a time. */
  clients: number;
  /** Aborted: the clients take no further payment (time ran out, Ctrl-C). */
  signal: AbortSignal;
  /**
   * Makes one logical payment, retries included, as client number `client` (0 to clients − 1);
   * resolves to the chargeId the client ended with, if any.
   */
  pay: (order: PaymentOrder, client: number) => Promise<string | undefined>;
}

/**
 * Runs the clients until every payment was made or `signal` aborted. One outcome per payment:
 * a payment never sent counts as lost, under the id `never-sent-<seq>`.
 */
export async function runPaymentClients(options: PaymentClientsOptions): Promise<ClientOutcome[]> {
  const outcomes: ClientOutcome[] = [];
  let next = 0;
  const client = async (_: unknown, index: number) => {
    while (next < options.payments && !options.signal.aborted) {
      const order = paymentOrder(next++);
      const chargeId = await options.pay(order, index);
      outcomes.push({ paymentId: order.paymentId, chargeId });
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  for (let seq = outcomes.length; seq < options.payments; seq++) {
    outcomes.push({ paymentId: `never-sent-${seq}`, chargeId: undefined });
  }
  return outcomes;
}
