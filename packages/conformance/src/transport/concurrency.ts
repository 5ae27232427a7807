import type { Delivery } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import { requestIdOf } from '../spy.js';
import type { Suite } from '../suite.js';
import { gate } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

/** C17, C18, C21: how many deliveries are out at once, and what partial settlement does. */
export function registerConcurrencyCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C17',
    'concurrency bound (subscription): never more than maxInFlight unsettled deliveries',
    async (env) => {
      const maxInFlight = 3;
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, {
        source,
        spy,
        maxInFlight,
        react: (d) => env.holdLease(d),
      });
      const total = 8;
      const ids = Array.from({ length: total }, (_, i) => env.id(`m${i}`));
      for (const [i, id] of ids.entries())
        await transport.publish(source, { requestId: id, body: `m${i}` });

      await spy.waitForCount('delivered', maxInFlight);
      await env.quiet();
      expect(spy.count('delivered'), 'deliveries while all slots are held').toBe(maxInFlight);

      // Each settlement frees exactly one slot. The one settled is the earliest published of those
      // out, not the earliest delivered: where one message per partition is out at a time (Kafka
      // in order; keyless messages go round-robin), that is the one the next message waits
      // behind, whichever partition's first message arrived first.
      for (let settledCount = 1; settledCount <= total; settledCount++) {
        const out = spy.all('delivered').filter((r) => !r.data.delivery.settled);
        const earliest = ids
          .map((id) => out.find((r) => r.requestId === id))
          .find((r) => r !== undefined);
        if (!earliest) break;
        expect(await earliest.data.delivery.ack()).toBe(true);
        const expected = Math.min(total, maxInFlight + settledCount);
        await spy.waitForCount('delivered', expected);
        const unsettled = spy.all('delivered').filter((r) => !r.data.delivery.settled).length;
        expect(unsettled).toBeLessThanOrEqual(maxInFlight);
      }
      await env.quiet();
      expect(spy.count('delivered')).toBe(total);
    },
  );

  suite.case(
    'C17',
    'concurrency bound (consumer): never more than `concurrency` handlers run at once',
    async (env) => {
      const concurrency = 3;
      const source = await env.source();
      const release = gate();
      env.defer('handler gate', () => release.open());
      const { spy } = await env.startConsumer({
        source,
        concurrency,
        handler: () => release.promise,
      });
      const publisher = await env.connect();
      const total = 8;
      for (let i = 0; i < total; i++) await publisher.publish(source, { body: { i } });

      await spy.waitForCount('handler-started', concurrency);
      await env.quiet();
      expect(spy.count('handler-started'), 'handlers started while all are blocked').toBe(
        concurrency,
      );
      release.open();
      await spy.waitForCount('processed', total);
      expect(spy.maxRunning).toBe(concurrency);
    },
  );

  suite.case(
    'C18',
    'no-ack backpressure: with maxInFlight 1 and the first message unsettled, the next is not delivered',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, {
        source,
        spy,
        maxInFlight: 1,
        react: (d) => env.holdLease(d),
      });
      const ids = [env.id('first'), env.id('second')];
      for (const [i, id] of ids.entries())
        await transport.publish(source, { requestId: id, body: `${i}` });

      // Messages without a key have no order on every broker (SQS: none on standard queues,
      // one group each on FIFO): whichever comes first is the one held.
      const [first] = await spy.waitForCount('delivered', 1);
      const held = first?.data.delivery;
      const other = ids.find((id) => id !== first?.requestId) ?? '';
      await env.quiet();
      expect(spy.count('delivered'), 'delivered while the first was unsettled').toBe(1);
      expect(await held?.ack()).toBe(true);
      const next = (await spy.waitFor(other, 'delivered')).data.delivery;
      expect(await next.ack()).toBe(true);
    },
  );

  suite.case(
    'C21',
    'partial settlement of a batch: ack 7, retry 3 — only the retried come back',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      const retriedIndexes = new Set([2, 5, 8]);
      const ids = Array.from({ length: 10 }, (_, i) => env.id(`b${i}`));
      // Only redeliveries are acked by the reaction; first deliveries wait for the test.
      await env.subscribe(transport, {
        source,
        spy,
        maxInFlight: ids.length,
        react: async (d: Delivery) => {
          const id = requestIdOf(d.message);
          if (id !== undefined && spy.count('delivered', id) > 1) await d.ack();
          else env.holdLease(d);
        },
      });
      // One key: on a partitioned broker the batch shares a partition, where the prefix rule bites.
      for (const id of ids)
        await transport.publish(source, { requestId: id, body: id, key: 'batch' });

      // Settled in index order, each as soon as it is delivered: a transport that hands out one
      // message of a key at a time (Kafka consumed in partition order, SQS FIFO) never has the
      // whole batch out at once; one that does gets the same settlements in the same order.
      for (const [i, id] of ids.entries()) {
        const { delivery } = (await spy.waitFor(id, 'delivered')).data;
        const ok = retriedIndexes.has(i) ? await delivery.retry() : await delivery.ack();
        expect(ok, `settling ${id}`).toBe(true);
      }
      for (const i of retriedIndexes) {
        const id = ids[i];
        if (id !== undefined) await spy.waitFor(id, 'acked', { where: (r) => r.data.ok });
      }
      await env.quiet();

      const redelivered = ids.filter((id) => spy.count('delivered', id) > 1);
      const retried = ids.filter((_, i) => retriedIndexes.has(i));
      if (env.capabilities.batchAck === 'individual') {
        expect(redelivered).toEqual(retried);
      } else {
        // Contiguous-prefix commits: acks after the first retried offset may come back (dups).
        expect(redelivered).toEqual(expect.arrayContaining(retried));
        const firstRetried = Math.min(...retriedIndexes);
        for (const id of redelivered) expect(ids.indexOf(id)).toBeGreaterThanOrEqual(firstRetried);
      }
    },
  );
}
