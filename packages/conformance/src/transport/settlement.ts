import { DeadLetterHeaders, type Delivery } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { bytes, expectAttempt, expectNextAttempt, maxNativeDelayMs } from './expectations.js';
import type { TransportEnv } from './transportEnv.js';

const ack = async (delivery: Delivery) => void (await delivery.ack());

/** C05–C10, C12, C13: what each settlement verb does to a message. */
export function registerSettlementCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C05',
    'ack removes: an acked message is never redelivered after a restart',
    async (env) => {
      const source = await env.source();
      const group = env.group();
      const before = await env.connect();
      const spyBefore = env.spy();
      await env.subscribe(before, { source, group, spy: spyBefore, react: ack });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await before.publish(source, { body: `m${i}` })).requestId);
      const acks = await spyBefore.waitForCount('acked', ids.length);
      expect(acks.map((r) => r.data.ok)).toEqual([true, true, true]);
      await before.close();

      const after = await env.connect();
      const spyAfter = env.spy();
      await env.subscribe(after, { source, group, spy: spyAfter, react: ack });
      await env.sentinel(after, source, spyAfter);
      await env.quiet();
      for (const id of ids) expect(spyAfter.count('delivered', id), `${id} redelivered`).toBe(0);
      await env.expectEmpty(source, group);
    },
  );

  suite.case(
    'C06',
    'settle once: a second ack, retry, reject or release resolves false, never throws, and the connection keeps working',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });
      const [m1, m2, m3, m4] = ['m1', 'm2', 'm3', 'm4'].map((label) => env.id(label)) as [
        string,
        string,
        string,
        string,
      ];
      for (const id of [m1, m2, m3]) await transport.publish(source, { requestId: id, body: id });

      // ack, then every other verb on the same delivery.
      const first = (await spy.waitFor(m1, 'delivered')).data.delivery;
      expect(await first.ack()).toBe(true);
      expect(first.settled).toBe(true);
      expect(await first.ack(), 'ack after ack').toBe(false);
      expect(await first.retry(), 'retry after ack').toBe(false);
      expect(await first.retry({ delayMs: 10 }), 'delayed retry after ack').toBe(false);
      expect(await first.reject({ reason: 'late' }), 'reject after ack').toBe(false);
      expect(await first.release(), 'release after ack').toBe(false);
      expect(await first.extendLease(1_000), 'extendLease after ack').toBe(false);

      // retry, then ack: the retry stands and the message comes back.
      const second = (await spy.waitFor(m2, 'delivered')).data.delivery;
      expect(await second.retry()).toBe(true);
      expect(await second.ack(), 'ack after retry').toBe(false);
      const again = (await spy.waitFor(m2, 'delivered', { count: 2 })).data.delivery;
      expect(await again.ack()).toBe(true);

      // Racing verbs: the first call wins, whatever the broker answers later.
      const third = (await spy.waitFor(m3, 'delivered')).data.delivery;
      const raced = await Promise.all([
        third.ack(),
        third.retry(),
        third.reject({ reason: 'race' }),
        third.release(),
        third.ack(),
      ]);
      expect(raced).toEqual([true, false, false, false, false]);

      // The connection survived all of it (a double ack closes an AMQP channel).
      await transport.publish(source, { requestId: m4, body: m4 });
      const fourth = (await spy.waitFor(m4, 'delivered')).data.delivery;
      expect(await fourth.ack()).toBe(true);

      await env.sentinel(transport, source, spy);
      await env.quiet();
      expect(spy.count('delivered', m1)).toBe(1);
      expect(spy.count('delivered', m2)).toBe(2);
      expect(spy.count('delivered', m3)).toBe(1);
      await env.expectNoDeadLetters(source);
    },
  );

  suite.case(
    'C07',
    'crash: an unsettled message is redelivered to the next instance; the dead connection cannot settle it',
    async (env) => {
      const source = await env.source();
      const group = env.group();
      const crashing = await env.connect();
      const spyCrashing = env.spy();
      await env.subscribe(crashing, { source, group, spy: spyCrashing, maxInFlight: 1 });
      const id = env.id();
      await crashing.publish(source, { requestId: id, body: 'work' });
      const lost = (await spyCrashing.waitFor(id, 'delivered')).data.delivery;

      const survivor = await env.connect();
      const spySurvivor = env.spy();
      await env.subscribe(survivor, { source, group, spy: spySurvivor, maxInFlight: 1 });
      await crashing.close(); // mid-handler: nothing was settled

      const { data } = await spySurvivor.waitFor(id, 'delivered');
      expect(data.message.redelivered).toBe(true);
      expect(bytes(data.message.body)).toEqual(bytes('work'));
      expectAttempt(data.message, 2, env.capabilities, 'attempt after a crash');
      expect(await lost.ack(), 'ack through the closed connection').toBe(false);
      expect(await data.delivery.ack()).toBe(true);
      await env.sentinel(survivor, source, spySurvivor);
      await env.quiet();
      expect(spySurvivor.count('delivered', id)).toBe(1);
    },
  );

  suite.case(
    'C08',
    'retry: the message comes back with attempt + 1 and redelivered',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });
      const id = env.id();
      await transport.publish(source, { requestId: id, body: 'again' });
      const first = (await spy.waitFor(id, 'delivered')).data;
      expectAttempt(first.message, 1, env.capabilities);
      expect(await first.delivery.retry()).toBe(true);

      const second = (await spy.waitFor(id, 'delivered', { count: 2 })).data;
      expectNextAttempt(first.message, second.message, true, env.capabilities);
      expect(second.message.redelivered).toBe(true);
      expect(bytes(second.message.body)).toEqual(bytes('again'));
      expect(await second.delivery.ack()).toBe(true);
    },
  );

  suite.case(
    'C09',
    'retry with delay: not redelivered before the delay, redelivered after it',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });
      const { retryDelayMs, delayToleranceMs, delaySlackMs } = env.timing;
      const delayMs = Math.min(retryDelayMs, maxNativeDelayMs(env.capabilities));
      const id = env.id();
      await transport.publish(source, { requestId: id, body: 'later' });
      const first = (await spy.waitFor(id, 'delivered')).data.delivery;
      const retriedAt = performance.now();
      expect(await first.retry({ delayMs })).toBe(true);

      const second = await spy.waitFor(id, 'delivered', {
        count: 2,
        timeoutMs: delayMs + delaySlackMs + env.timing.waitMs,
      });
      const waitedMs = second.at - retriedAt;
      expect(waitedMs, 'redelivered before the delay').toBeGreaterThanOrEqual(
        delayMs - delayToleranceMs,
      );
      // An emulated delay (pause + seek, TTL queue) is only promised as a lower bound.
      if (env.capabilities.nativeDelay !== 'emulated') {
        expect(waitedMs, 'redelivered long after the delay').toBeLessThanOrEqual(
          delayMs + delaySlackMs,
        );
      }
      expect(await second.data.delivery.ack()).toBe(true);
    },
  );

  suite.case('C10', 'attempt counter: attempts 1, 2, 3 across retries', async (env) => {
    const transport = await env.connect();
    const source = await env.source();
    const spy = env.spy();
    await env.subscribe(transport, {
      source,
      spy,
      react: async (d) => void (await (spy.count('delivered') < 3 ? d.retry() : d.ack())),
    });
    const id = env.id();
    await transport.publish(source, { requestId: id, body: 'x' });
    await spy.waitFor(id, 'acked');
    const deliveries = spy.all('delivered', id).map((r) => r.data.message);
    expect(deliveries).toHaveLength(3);
    deliveries.forEach((message, i) => {
      expectAttempt(message, i + 1, env.capabilities, `delivery ${i + 1}`);
    });
    const attempts = deliveries.map((m) => m.attempt);
    expect(
      [...attempts].sort((x, y) => x - y),
      'attempts never go down',
    ).toEqual(attempts);
  });

  suite.case(
    'C10',
    'attempt counter (consumer): the handler sees attempts 1, 2, 3 across failures, counted by the engine whatever the broker counts',
    async (env) => {
      const source = await env.source();
      const store = await env.sharedStore();
      const { spy } = await env.startConsumer({
        source,
        retry: { maxAttempts: 3 },
        handler: (_message, ctx) => {
          if (ctx.attempt < 3) throw new Error(`attempt ${ctx.attempt} fails`);
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 10 } });

      const processed = (await spy.waitFor(id, 'processed')).data;
      // The store record counts attempts: exact even where the broker's counter is approximate
      // or absent (redeliveryCounter 'none').
      expect(spy.all('handler-started', id).map((r) => r.data.ctx.attempt)).toEqual([1, 2, 3]);
      expect(spy.all('retry', id).map((r) => r.data.attempt)).toEqual([1, 2]);
      expect(processed.attempt).toBe(3);
      expect(await store.inspect({ scope: env.scope, requestId: id })).toMatchObject({
        state: 'COMPLETED',
        attempt: 3,
      });
    },
  );

  suite.case(
    'C12',
    'reject: goes straight to the dead-letter destination with reason, code, attempts and source',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });
      const id = env.id();
      await transport.publish(source, {
        requestId: id,
        body: 'poison',
        headers: { 'x-origin': 'c12' },
      });
      const { delivery } = (await spy.waitFor(id, 'delivered')).data;
      const rejected = await delivery.reject({
        reason: 'invalid order ✗',
        code: 'IDEMQ_ERR_PAYLOAD_INVALID',
        attempts: 1,
      });
      expect(rejected).toBe(true);

      const [dead] = await env.deadLetters(source, 1);
      expect(dead?.message.requestId).toBe(id);
      expect(bytes(dead?.message.body ?? new Uint8Array())).toEqual(bytes('poison'));
      expect(dead?.message.headers).toMatchObject({
        [DeadLetterHeaders.reason]: 'invalid order ✗',
        [DeadLetterHeaders.code]: 'IDEMQ_ERR_PAYLOAD_INVALID',
        [DeadLetterHeaders.attempts]: '1',
        [DeadLetterHeaders.source]: source,
      });

      await env.sentinel(transport, source, spy);
      await env.quiet();
      expect(spy.count('delivered', id), 'redelivered from the source').toBe(1);
    },
  );

  suite.case(
    'C13',
    'release is not a failure: released or given-back messages return without counting an attempt',
    async (env) => {
      const counts = env.capabilities.releaseCountsAttempt;
      const source = await env.source();
      const group = env.group();
      const transport = await env.connect();
      const spy = env.spy();
      const subscription = await env.subscribe(transport, { source, group, spy, maxInFlight: 1 });
      const id = env.id();
      await transport.publish(source, { requestId: id, body: 'x' });

      const first = (await spy.waitFor(id, 'delivered')).data;
      expect(await first.delivery.release()).toBe(true);
      const second = (await spy.waitFor(id, 'delivered', { count: 2 })).data;
      expectNextAttempt(first.message, second.message, counts, env.capabilities, 'after release');

      // Closing a subscription (a clean shutdown) gives its unsettled deliveries back the same way.
      const other = await env.connect();
      const otherSpy = env.spy();
      await env.subscribe(other, { source, group, spy: otherSpy, maxInFlight: 1 });
      await subscription.close();
      const third = (await otherSpy.waitFor(id, 'delivered')).data;
      expectNextAttempt(second.message, third.message, counts, env.capabilities, 'after close');
      expect(await second.delivery.ack(), 'ack through the closed subscription').toBe(false);
      expect(await third.delivery.ack()).toBe(true);
    },
  );
}
