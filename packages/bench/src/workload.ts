/** One message as every contender receives it. */
export interface BenchMessage {
  requestId: string;
  /** JSON body (about 60 bytes), the payload idemq fingerprints. */
  body: string;
}

export interface Workload {
  /** Every id once, in order. */
  unique: BenchMessage[];
  /** A share of the ids sent again, after all of `unique` completed. */
  duplicates: BenchMessage[];
}

/** The share of ids sent a second time. */
export const DUPLICATE_RATIO = 0.2;

/**
 * `ids` unique messages under `namespace` plus `DUPLICATE_RATIO` of them again, spread evenly
 * over the id range (every fifth id). Deterministic: a run is reproducible from its arguments.
 */
export function makeWorkload(namespace: string, ids: number): Workload {
  const unique: BenchMessage[] = [];
  for (let i = 0; i < ids; i++) {
    unique.push({
      requestId: `${namespace}:${i}`,
      body: JSON.stringify({ orderId: i, amountCents: 1999 + (i % 100), currency: 'EUR' }),
    });
  }
  const count = Math.round(ids * DUPLICATE_RATIO);
  const duplicates: BenchMessage[] = [];
  for (let k = 0; k < count; k++) {
    const original = unique[Math.floor((k * ids) / count)] as BenchMessage;
    // A redelivery is a new message object with the same id and body.
    duplicates.push({ requestId: original.requestId, body: original.body });
  }
  return { unique, duplicates };
}
