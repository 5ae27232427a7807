import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { waitUntil } from '../wait.js';
import { bytes, expectAttempt } from './expectations.js';
import type { TransportEnv } from './transportEnv.js';

/** The capabilities check and C01–C04: messages arrive intact, where they belong. */
export function registerDeliveryCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C00',
    'capabilities: every connection declares the capabilities the harness runs the suite with',
    async (env) => {
      const transport = await env.connect();
      expect(transport.capabilities).toEqual(env.capabilities);
      expect(typeof transport.name).toBe('string');
      expect(transport.name.length).toBeGreaterThan(0);
    },
  );

  suite.case(
    'C01',
    'publish-subscribe roundtrip: body bytes, headers, id, source, contentType and key intact',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });

      const maxHeaders = env.capabilities.maxHeaders;
      const allHeaders: Record<string, string> = { 'x-conformance': 'yes', 'x-unicode': 'é ✓ 😀' };
      const headers = Object.fromEntries(
        Object.entries(allHeaders).slice(0, maxHeaders === null ? undefined : maxHeaders),
      );
      const binary = Uint8Array.from([0, 1, 2, 0x7f, 0x80, 0xfe, 0xff]);
      const text = 'héllo wörld ✓';
      const json = { amount: 10, currency: 'EUR', note: 'naïve' };
      const messages = [
        { body: binary, expected: bytes(binary), contentType: 'application/octet-stream' },
        { body: text, expected: bytes(text), contentType: 'text/plain; charset=utf-8' },
        { body: json, expected: bytes(JSON.stringify(json)), contentType: undefined },
      ].map((m, i) => ({ ...m, requestId: env.id(`c01-${i}`), key: `key-${i}` }));

      for (const m of messages) {
        const receipt = await transport.publish(source, {
          requestId: m.requestId,
          body: m.body,
          headers,
          key: m.key,
          ...(m.contentType === undefined ? {} : { contentType: m.contentType }),
        });
        expect(receipt.requestId).toBe(m.requestId);
      }

      for (const m of messages) {
        const { data } = await spy.waitFor(m.requestId, 'delivered');
        const { message } = data;
        expect(message.requestId).toBe(m.requestId);
        expect(bytes(message.body)).toEqual(m.expected);
        expect(message.headers).toMatchObject(headers);
        expect(message.source).toBe(source);
        // A JSON body without a content type gets one, so consumers know how to decode it.
        expect(message.contentType).toBe(m.contentType ?? 'application/json');
        if (env.capabilities.orderingScope === 'none') {
          expect([undefined, m.key]).toContain(message.key);
        } else {
          expect(message.key).toBe(m.key);
        }
        expectAttempt(message, 1, env.capabilities);
        expect(message.redelivered).toBe(false);
        expect(await data.delivery.ack()).toBe(true);
      }
      expect(spy.count('delivered')).toBe(messages.length);
    },
  );

  suite.case('C02', 'isolation: no cross-talk between two destinations', async (env) => {
    const transport = await env.connect();
    const [a, b] = [await env.source(), await env.source()];
    const spyA = env.spy();
    const spyB = env.spy();
    const ack = async (d: { ack(): Promise<boolean> }) => void (await d.ack());
    await env.subscribe(transport, { source: a, spy: spyA, react: ack });
    await env.subscribe(transport, { source: b, spy: spyB, react: ack });

    const idsA: string[] = [];
    const idsB: string[] = [];
    for (let i = 0; i < 3; i++) {
      idsA.push((await transport.publish(a, { body: `a${i}` })).requestId);
      idsB.push((await transport.publish(b, { body: `b${i}` })).requestId);
    }
    await spyA.waitForCount('acked', 3);
    await spyB.waitForCount('acked', 3);
    await env.quiet();

    const seenA = spyA.all('delivered');
    const seenB = spyB.all('delivered');
    expect(seenA.map((r) => r.requestId).sort()).toEqual([...idsA].sort());
    expect(seenB.map((r) => r.requestId).sort()).toEqual([...idsB].sort());
    for (const r of seenA) expect(r.data.message.source).toBe(a);
    for (const r of seenB) expect(r.data.message.source).toBe(b);
  });

  suite.case(
    'C03',
    'competing consumers: instances in one group handle every message, and share the load',
    async (env) => {
      const source = await env.source();
      const group = env.group();
      const spies = [env.spy(), env.spy()] as const;
      // A hold before each ack keeps one instance from draining the queue alone: 20 messages
      // two at a time then take longer than an idle instance's pause between short polls
      // (SQS: 200 ms), so both get a share.
      const ackSoon = (d: { ack(): Promise<boolean> }) =>
        new Promise<void>((resolve) => setTimeout(() => void d.ack().then(() => resolve()), 40));
      const one = await env.connect();
      const two = await env.connect();
      await env.subscribe(one, { source, group, spy: spies[0], maxInFlight: 2, react: ackSoon });
      await env.subscribe(two, { source, group, spy: spies[1], maxInFlight: 2, react: ackSoon });

      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        ids.push((await one.publish(source, { body: `m${i}`, key: `k${i}` })).requestId);
      }
      const handled = () => new Set(spies.flatMap((s) => s.all('acked').map((r) => r.requestId)));
      await waitUntil(() => ids.every((id) => handled().has(id)), {
        timeoutMs: env.timing.waitMs,
        what: 'every message to be acked by one of the instances',
      });
      for (const [i, spy] of spies.entries()) {
        expect(spy.count('delivered'), `deliveries to instance ${i}`).toBeGreaterThan(0);
      }
    },
  );

  suite.caseUnless(
    suite.harness.capabilities.consumerGroups
      ? undefined
      : 'consumerGroups is false: every subscriber of a source competes (SQS)',
    'C04',
    'fan-out: two groups each get every message',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spies = [env.spy(), env.spy()];
      const ack = async (d: { ack(): Promise<boolean> }) => void (await d.ack());
      // Both groups exist before publishing: a group sees what is published after it subscribed.
      for (const spy of spies) {
        await env.subscribe(transport, { source, group: env.group(), spy, react: ack });
      }
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await transport.publish(source, { body: `m${i}` })).requestId);
      for (const spy of spies) await spy.waitForCount('acked', ids.length);
      await env.quiet();
      for (const spy of spies) {
        expect(
          spy
            .all('delivered')
            .map((r) => r.requestId)
            .sort(),
        ).toEqual([...ids].sort());
      }
    },
  );
}
