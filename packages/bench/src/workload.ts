/** One message as every contender receives it. */
export interface BenchMessage {
  requestId: string;
  /** JSON body (about 60 bytes), the payload idemq fingerprints. */
  body: string;
  /** A duplicate: the position of its original in the stream, which it is sent after. */
  originalAt?: number;
}

export interface Workload {
  /** Every id once, with a duplicate of some of them mixed in after its original. */
  stream: BenchMessage[];
  /** How many of `stream` are duplicates. */
  duplicateCount: number;
  /**
   * As many duplicates of other ids (completed in the stream, not sent again in it), alone: the
   * untimed pass that counts what a duplicate costs, a first duplicate for every contender.
   */
  duplicates: BenchMessage[];
}

/** The share of ids sent a second time. */
export const DUPLICATE_RATIO = 0.2;

/** Originals between a message and its duplicate, so the original has long completed. */
export const DUPLICATE_DISTANCE = 1_250;

/**
 * `ids` unique messages under `namespace`, with `DUPLICATE_RATIO` of them sent again, mixed into
 * the stream as a consumer gets redeliveries: the duplicates of ids spread evenly over the first
 * `ids − DUPLICATE_DISTANCE`, each right after the original `DUPLICATE_DISTANCE` further on (with
 * fewer ids, after the last). Deterministic: a run is reproducible from its arguments.
 */
export function makeWorkload(namespace: string, ids: number): Workload {
  const originals: BenchMessage[] = [];
  for (let i = 0; i < ids; i++) {
    originals.push({
      requestId: `${namespace}:${i}`,
      body: JSON.stringify({ orderId: i, amountCents: 1999 + (i % 100), currency: 'EUR' }),
    });
  }
  const count = Math.round(ids * DUPLICATE_RATIO);
  const span = ids > DUPLICATE_DISTANCE ? ids - DUPLICATE_DISTANCE : ids;
  const duplicatedAfter = new Map<number, number[]>();
  for (let k = 0; k < count; k++) {
    const original = Math.floor((k * span) / count);
    const after = Math.min(ids - 1, original + DUPLICATE_DISTANCE);
    duplicatedAfter.set(after, [...(duplicatedAfter.get(after) ?? []), original]);
  }
  const stream: BenchMessage[] = [];
  const positionOf: number[] = [];
  const duplicated = new Set<number>();
  originals.forEach((message, i) => {
    positionOf[i] = stream.length;
    stream.push(message);
    for (const original of duplicatedAfter.get(i) ?? []) {
      const { requestId, body } = originals[original] as BenchMessage;
      // A redelivery is a new message object with the same id and body.
      stream.push({ requestId, body, originalAt: positionOf[original] as number });
      duplicated.add(original);
    }
  });
  const others = originals.filter((_, i) => !duplicated.has(i));
  const duplicates = Array.from({ length: count }, (_, k) => {
    const { requestId, body } = others[Math.floor((k * others.length) / count)] as BenchMessage;
    return { requestId, body };
  });
  return { stream, duplicateCount: count, duplicates };
}
