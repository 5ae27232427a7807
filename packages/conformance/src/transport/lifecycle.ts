import type { HandlerContext } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { gate, timed, waitUntil } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

/** A handler that only ends when its signal aborts. */
function untilAborted(_message: unknown, ctx: HandlerContext): Promise<never> {
  return new Promise((_, reject) => {
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
  });
}

/** C22, C23: stopping and closing, gracefully and not; C34: health. */
export function registerLifecycleCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C22',
    'graceful drain: stop() stops fetching, waits for running handlers, acks them; nothing lost or left invisible',
    async (env) => {
      const source = await env.source();
      const release = gate();
      env.defer('handler gate', () => release.open());
      const { consumer, spy } = await env.startConsumer({
        source,
        concurrency: 5,
        handler: () => release.promise,
      });
      const publisher = await env.connect();
      const running: string[] = [];
      for (let i = 0; i < 3; i++)
        running.push((await publisher.publish(source, { body: { i } })).requestId);
      await spy.waitForCount('handler-started', running.length);

      let stopped = false;
      const stopping = consumer.stop({ timeoutMs: env.timing.waitMs }).then(() => {
        stopped = true;
      });
      // A broker may still push what it had in flight when stop() was called: give it the quiet
      // window to stop fetching, then publish.
      await env.quiet();
      const later: string[] = [];
      for (let i = 0; i < 2; i++)
        later.push((await publisher.publish(source, { body: { i } })).requestId);
      await env.quiet();
      expect(stopped, 'stop() returned while handlers were still running').toBe(false);
      for (const id of later)
        expect(spy.count('delivered', id), `${id} fetched after stop()`).toBe(0);

      release.open();
      await stopping;
      for (const id of running) {
        await spy.waitFor(id, 'processed');
        expect(
          spy.all('acked', id).map((r) => r.data.ok),
          `${id} acks`,
        ).toEqual([true]);
      }

      const next = await env.startConsumer({ source, handler: () => undefined });
      for (const id of later) await next.spy.waitFor(id, 'processed');
      await env.quiet();
      for (const id of running)
        expect(next.spy.count('delivered', id), `${id} redelivered`).toBe(0);
      await env.expectEmpty(source);
    },
  );

  suite.case(
    'C22',
    'drain timeout: handlers still running at the timeout are aborted and their messages are processed by the next instance',
    async (env) => {
      const source = await env.source();
      const drainMs = 100;
      const { consumer, spy } = await env.startConsumer({ source, handler: untilAborted });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { slow: true } });
      const started = await spy.waitFor(id, 'handler-started');

      const { elapsedMs, outcome } = await timed(() => consumer.stop({ timeoutMs: drainMs }));
      expect(outcome.status).toBe('fulfilled');
      expect(elapsedMs).toBeLessThan(drainMs + env.timing.waitMs);
      expect(started.data.ctx.signal.aborted, 'the abandoned handler’s signal').toBe(true);

      const next = await env.startConsumer({ source, handler: () => 'done' });
      const rerun = await next.spy.waitFor(id, 'handler-started');
      await next.spy.waitFor(id, 'processed');
      expect(next.spy.count('handler-started', id)).toBe(1);
      // Shutdown is not the message's failure (C13): no dead letter, no attempt counted.
      expect(
        spy.all('dead-letter', id).map((r) => r.data),
        'dead-letter events',
      ).toEqual([]);
      expect(spy.count('rejected', id), 'reject() calls for the abandoned delivery').toBe(0);
      expect(rerun.data.ctx.attempt, 'attempt of the run after the abandoned one').toBe(1);
      await env.expectNoDeadLetters(source);
    },
  );

  suite.case(
    'C23',
    'close (consumer): idempotent, returns while a handler ignores its signal, and nothing is handled afterwards',
    async (env) => {
      const source = await env.source();
      const drainTimeoutMs = 200;
      const forever = gate();
      env.defer('blocked handler', () => forever.open());
      const { consumer, spy } = await env.startConsumer({
        source,
        drainTimeoutMs,
        handler: () => forever.promise,
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { blocked: true } });
      const started = await spy.waitFor(id, 'handler-started');

      const { elapsedMs, outcome } = await timed(() =>
        Promise.all([consumer.close(), consumer.close()]),
      );
      expect(outcome.status, 'concurrent close() calls').toBe('fulfilled');
      expect(elapsedMs).toBeLessThan(drainTimeoutMs + env.timing.waitMs);
      expect(started.data.ctx.signal.aborted).toBe(true);
      await expect(consumer.close(), 'close() after close()').resolves.toBeUndefined();
      await expect(
        consumer[Symbol.asyncDispose](),
        'asyncDispose after close()',
      ).resolves.toBeUndefined();

      const after = env.id('after-close');
      await publisher.publish(source, { requestId: after, body: {} });
      await env.quiet();
      expect(spy.count('delivered', after), 'delivered after close()').toBe(0);
      expect(spy.count('handler-started')).toBe(1);
    },
  );

  suite.case(
    'C23',
    'close (transport): stop/close of a subscription and close of a connection are idempotent; close() alone stops fetching; nothing is lost',
    async (env) => {
      const source = await env.source();
      const transport = await env.connect();
      const spy = env.spy();
      const subscription = await env.subscribe(transport, { source, spy, maxInFlight: 1 });
      const [first, second] = [env.id('first'), env.id('second')];
      await transport.publish(source, { requestId: first, body: '1' });
      const held = (await spy.waitFor(first, 'delivered')).data.delivery;

      await Promise.all([subscription.stop(), subscription.stop()]);
      await subscription.stop();
      // Already handed out: may still be settled after stop().
      expect(await held.ack()).toBe(true);
      await transport.publish(source, { requestId: second, body: '2' });
      await env.quiet();
      expect(spy.count('delivered', second), 'delivered after stop()').toBe(0);

      await Promise.all([subscription.close(), subscription.close()]);
      await subscription.close();
      await Promise.all([transport.close(), transport.close()]);
      await transport.close();

      const other = await env.connect();
      const otherSpy = env.spy();
      await env.subscribe(other, { source, spy: otherSpy });
      const { delivery } = (await otherSpy.waitFor(second, 'delivered')).data;
      expect(await delivery.ack()).toBe(true);
      expect(otherSpy.count('delivered', first)).toBe(0);

      // close() without stop() first stops fetching too: nothing reaches a closed subscriber.
      const lone = await env.source();
      const group = env.group('closing');
      const closingSpy = env.spy();
      const closing = await env.subscribe(other, { source: lone, group, spy: closingSpy });
      await env.sentinel(other, lone, closingSpy);
      await closing.close();
      const third = env.id('third');
      await other.publish(lone, { requestId: third, body: '3' });
      await env.quiet();
      expect(closingSpy.count('delivered', third), 'delivered after close()').toBe(0);
      const nextSpy = env.spy();
      await env.subscribe(other, { source: lone, group, spy: nextSpy });
      expect(await (await nextSpy.waitFor(third, 'delivered')).data.delivery.ack()).toBe(true);
    },
  );

  suite.case(
    'C34',
    'health: a subscription and its consumer report up while consuming, down once stopped, closed or disconnected',
    async (env) => {
      const source = await env.source();
      const transport = await env.connect();
      const spy = env.spy();
      const subscription = await env.subscribe(transport, { source, spy });
      // Consuming once a message comes through (a broker that joins a group in the background
      // may say degraded until then, never down).
      expect(subscription.health().status, 'right after subscribe').not.toBe('down');
      await env.sentinel(transport, source, spy);
      await waitUntil(() => subscription.health().status === 'up', {
        timeoutMs: env.timing.waitMs,
        what: 'the subscription to report up',
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}; it says ${JSON.stringify(subscription.health())}`);
      });
      expect(subscription.health()).toEqual({ status: 'up' });
      await subscription.stop();
      expect(subscription.health()).toMatchObject({ status: 'down', reason: expect.any(String) });
      await subscription.close();
      expect(subscription.health().status).toBe('down');

      const { consumer, spy: consumerSpy } = await env.startConsumer({
        source,
        handler: () => undefined,
      });
      expect(consumer.health().status, 'right after start()').not.toBe('down');
      const id = (await transport.publish(source, { body: { n: 1 } })).requestId;
      await consumerSpy.waitFor(id, 'processed');
      await waitUntil(() => consumer.health().status === 'up', {
        timeoutMs: env.timing.waitMs,
        what: 'the consumer to report up',
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}; it says ${JSON.stringify(consumer.health())}`);
      });
      await consumer.stop();
      expect(consumer.health()).toEqual({ status: 'down', reason: 'stopped' });

      // The connection closed under a live subscription: down, not degraded (nothing reconnects
      // a transport that was closed).
      const doomed = await env.connect();
      const lastSpy = env.spy();
      const last = await env.subscribe(doomed, { source, spy: lastSpy });
      await env.sentinel(doomed, source, lastSpy);
      await doomed.close();
      expect(last.health().status).toBe('down');
    },
  );
}
