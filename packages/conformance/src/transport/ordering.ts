import type { Delivery } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import { recordAt } from '../spy.js';
import type { Suite } from '../suite.js';
import { maxNativeDelayMs } from './expectations.js';
import type { TransportEnv } from './transportEnv.js';

const ack = async (delivery: Delivery) => void (await delivery.ack());

/** C14–C16: a poison message, per-key order, and order across a retry. */
export function registerOrderingCases(suite: Suite<TransportEnv, TransportHarness>): void {
  const { capabilities } = suite.harness;

  suite.case(
    'C14',
    `poison does not stall others: other keys${
      capabilities.consumerGroups ? ' and groups' : ''
    } flow; the same key ${
      capabilities.nackBlocksKey
        ? 'waits behind it (nackBlocksKey)'
        : 'flows too (no nackBlocksKey)'
    }`,
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const delayMs = Math.min(env.timing.retryDelayMs, maxNativeDelayMs(env.capabilities));
      const poison = env.id('poison');
      const failing = env.spy();
      const healthy = env.spy();
      await env.subscribe(transport, {
        source,
        group: env.group('failing'),
        spy: failing,
        maxInFlight: 4,
        // Fails twice with a delay, then gives up: three deliveries spread over 2 × delay.
        react: async (d) => {
          if (d.message.requestId !== poison) return ack(d);
          if (failing.count('delivered', poison) < 3) await d.retry({ delayMs });
          else await d.reject({ reason: 'poison' });
        },
      });
      // Another group gets its own copies, unless subscribers of a source all compete (SQS).
      const groups = env.capabilities.consumerGroups;
      if (groups) {
        await env.subscribe(transport, {
          source,
          group: env.group('healthy'),
          spy: healthy,
          react: ack,
        });
      }

      const otherKey = [env.id('other-1'), env.id('other-2')];
      const sameKey = env.id('same-key');
      await transport.publish(source, { requestId: poison, body: 'p', key: 'k-poison' });
      for (const id of otherKey)
        await transport.publish(source, { requestId: id, body: 'o', key: 'k-other' });
      await transport.publish(source, { requestId: sameKey, body: 's', key: 'k-poison' });

      await failing.waitFor(poison, 'rejected');
      for (const id of [...otherKey, sameKey]) await failing.waitFor(id, 'acked');
      if (groups) await healthy.waitForCount('acked', 4);
      const poisonDeliveries = failing.all('delivered', poison);
      expect(poisonDeliveries).toHaveLength(3);
      const secondPoison = recordAt(poisonDeliveries, 1);
      const lastPoison = recordAt(poisonDeliveries, 2);

      // Another group never waits for this group's poison.
      for (const r of healthy.all('acked')) expect(r.at).toBeLessThan(lastPoison.at);

      const firstOf = (id: string) => recordAt(failing.all('delivered', id), 0);
      if (env.capabilities.nackBlocksKey) {
        expect(
          firstOf(sameKey).seq,
          'same key delivered while the poison was retried',
        ).toBeGreaterThan(lastPoison.seq);
        // With partition scope other keys may share the poison's partition; elsewhere they flow.
        if (env.capabilities.orderingScope !== 'partition') {
          for (const id of otherKey) expect(firstOf(id).seq).toBeLessThan(secondPoison.seq);
        }
      } else {
        for (const id of [...otherKey, sameKey]) {
          expect(firstOf(id).seq, `${id} waited for the poison`).toBeLessThan(secondPoison.seq);
        }
      }
    },
  );

  const noOrder =
    capabilities.orderingScope === 'none'
      ? "orderingScope is 'none': the transport promises no order to check"
      : undefined;

  suite.caseUnless(
    noOrder,
    'C15',
    'ordering per key: kept with several deliveries in flight',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      // Random short holds: acks complete out of order, deliveries must not be.
      await env.subscribe(transport, {
        source,
        spy,
        maxInFlight: 5,
        react: (d) =>
          new Promise<void>((resolve) =>
            setTimeout(() => void d.ack().then(() => resolve()), Math.random() * 5),
          ),
      });
      const keys = ['k-a', 'k-b', 'k-c'];
      const perKey = 8;
      for (let i = 0; i < perKey; i++) {
        for (const key of keys) await transport.publish(source, { body: `${key}:${i}`, key });
      }
      await spy.waitForCount('acked', keys.length * perKey);
      const delivered = spy
        .all('delivered')
        .map((r) => Buffer.from(r.data.message.body).toString());
      for (const key of keys) {
        const order = delivered.filter((b) => b.startsWith(`${key}:`));
        expect(order, `delivery order of ${key}`).toEqual(
          Array.from({ length: perKey }, (_, i) => `${key}:${i}`),
        );
      }
    },
  );

  suite.caseUnless(
    noOrder,
    'C16',
    `ordering after retry: ${
      capabilities.nackBlocksKey
        ? 'kept — the next message of the key waits for the retried one'
        : 'not kept — the next message of the key is not blocked by a delayed retry'
    }`,
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      const [first, second] = [env.id('first'), env.id('second')];
      const delayMs = Math.min(env.timing.retryDelayMs, maxNativeDelayMs(env.capabilities));
      await env.subscribe(transport, {
        source,
        spy,
        maxInFlight: 1,
        react: async (d) =>
          d.message.requestId === first && spy.count('delivered', first) === 1
            ? void (await d.retry({ delayMs }))
            : ack(d),
      });
      await transport.publish(source, { requestId: first, body: '1', key: 'k' });
      await transport.publish(source, { requestId: second, body: '2', key: 'k' });
      const redelivered = await spy.waitFor(first, 'delivered', { count: 2 });
      await spy.waitFor(first, 'acked');
      const next = await spy.waitFor(second, 'delivered');
      await spy.waitFor(second, 'acked');
      if (env.capabilities.nackBlocksKey) {
        expect(next.seq, 'second delivered before the retried first').toBeGreaterThan(
          redelivered.seq,
        );
      } else {
        expect(next.seq, 'second waited for the retried first').toBeLessThan(redelivered.seq);
      }
    },
  );
}
