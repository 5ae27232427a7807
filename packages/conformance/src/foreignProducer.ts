import {
  type ConsumedMessage,
  type ConsumerEvents,
  cloudEventsRequestId,
  createConsumer,
  memoryStore,
  type Transport,
} from '@idemq/core';
import { expect } from 'vitest';

/**
 * One event as a producer that is not idemq sends it: CloudEvents binary mode (attributes in
 * the broker's headers), a content type, and a body of UTF-8 text every broker can carry.
 */
export interface ForeignEvent {
  /** CloudEvents `source`. */
  source: string;
  /** CloudEvents `id`. */
  id: string;
  /** CloudEvents `type`, sent as a real producer would; idemq does not use it. */
  type: string;
  contentType: string;
  body: Buffer;
}

const event = (source: string, id: string, contentType: string, body: string): ForeignEvent => ({
  source,
  id,
  type: 'com.example.order',
  contentType,
  body: Buffer.from(body, 'utf8'),
});

const orderPlaced = event('/shop/orders', 'o-1', 'text/plain', 'order 1 placed');
const orderTotal = event('/shop/orders', 'o-2', 'application/json', '{"order":2,"total":9.5}');
// Looks like JSON, but its content type says bytes: it must arrive unparsed.
const orderBlob = event('/shop/orders', 'o-3', 'application/octet-stream', '{"raw":true}');
// The id of the first event under another source: another event (CloudEvents duplicates are
// equal (source, id) pairs).
const invoice = event('/shop/billing', 'o-1', 'text/plain; charset=utf-8', 'facture réglée ✓');
// Its handler fails once: the copy the adapter retries must keep its content type and CloudEvent.
const retried = event('/shop/orders', 'o-4', 'text/plain', 'order 4, second try');

/** What the case publishes, in order: five events, then a copy of three of them. */
export const FOREIGN_EVENTS: readonly ForeignEvent[] = [
  orderPlaced,
  orderTotal,
  orderBlob,
  invoice,
  retried,
  orderPlaced,
  orderBlob,
  invoice,
];

/** The value each event's handler must get, by requestId. */
const EXPECTED = new Map<string, unknown>([
  [cloudEventsRequestId(orderPlaced.source, orderPlaced.id), 'order 1 placed'],
  [cloudEventsRequestId(orderTotal.source, orderTotal.id), { order: 2, total: 9.5 }],
  [cloudEventsRequestId(orderBlob.source, orderBlob.id), new Uint8Array(orderBlob.body)],
  [cloudEventsRequestId(invoice.source, invoice.id), 'facture réglée ✓'],
  [cloudEventsRequestId(retried.source, retried.id), 'order 4, second try'],
]);
const RETRIED_ID = cloudEventsRequestId(retried.source, retried.id);

export interface ForeignProducerCase {
  /** A connected transport of the adapter under test; the caller closes it. */
  transport: Transport;
  /** Queue or topic, existing or declared by subscribing. */
  source: string;
  /** Sends the events with the broker's own client, as another producer would. */
  publish: (events: readonly ForeignEvent[]) => Promise<void>;
  /** Called once the consumer is subscribed, before publishing (to declare a queue, say). */
  beforePublish?: () => Promise<void>;
  timeoutMs?: number;
}

/**
 * Another producer publishes CloudEvents in binary mode with text, JSON and binary bodies, some
 * twice; an idemq consumer with `requestIdFrom: 'cloudevents'` consumes them. Each (source, id)
 * runs to success once, every copy is acked as a duplicate, nothing is dead-lettered, and each
 * body arrives decoded as its content type says, also after the adapter's retry of one event.
 */
export async function runForeignProducerCase(options: ForeignProducerCase): Promise<void> {
  const runs: ConsumedMessage<unknown>[] = [];
  const failedRuns: ConsumedMessage<unknown>[] = [];
  const duplicates: string[] = [];
  const deadLetters: ConsumerEvents['dead-letter'][] = [];
  const consumer = createConsumer({
    transport: options.transport,
    store: memoryStore(),
    source: options.source,
    scope: 'foreign-producer',
    requestIdFrom: 'cloudevents',
    // One at a time: a copy then finds its event COMPLETED rather than IN_PROGRESS.
    concurrency: 1,
    retry: { baseDelayMs: 10, maxDelayMs: 50, jitter: 'none' },
    handler: (message) => {
      if (message.requestId === RETRIED_ID && failedRuns.length === 0) {
        failedRuns.push(message);
        throw new Error('first try of the retried event fails');
      }
      runs.push(message);
    },
  });
  consumer.on('duplicate', ({ requestId }) => duplicates.push(requestId));
  consumer.on('dead-letter', (letter) => deadLetters.push(letter));
  await consumer.start();
  try {
    await options.beforePublish?.();
    await options.publish(FOREIGN_EVENTS);
    const copies = FOREIGN_EVENTS.length - EXPECTED.size;
    const deadline = performance.now() + (options.timeoutMs ?? 20_000);
    // Every delivery ends processed, duplicate or dead-lettered, bar the one failed try.
    while (runs.length + duplicates.length + deadLetters.length < FOREIGN_EVENTS.length) {
      if (performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(deadLetters).toEqual([]);
    expect(runs.map((run) => run.requestId).sort()).toEqual([...EXPECTED.keys()].sort());
    expect(duplicates).toHaveLength(copies);
    expect(failedRuns.map((run) => run.value)).toEqual([EXPECTED.get(RETRIED_ID)]);
    for (const run of runs) {
      const expected = EXPECTED.get(run.requestId);
      if (expected instanceof Uint8Array) {
        expect(run.value, run.requestId).toBeInstanceOf(Uint8Array);
        expect(new Uint8Array(run.value as Uint8Array), run.requestId).toEqual(expected);
      } else {
        expect(run.value, run.requestId).toEqual(expected);
      }
    }
  } finally {
    await consumer.stop({ timeoutMs: 1_000 });
  }
}
