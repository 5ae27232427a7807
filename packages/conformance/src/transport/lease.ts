import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import { expectAttempt } from './expectations.js';
import type { TransportEnv } from './transportEnv.js';

/** The broker lease a case waits around, and how long C19 holds a delivery past it. */
function leaseOf(harness: TransportHarness): { leaseMs: number; holdMs: number } {
  const { leaseExtension } = harness.capabilities;
  const leaseMs = harness.leaseMs;
  // Unreachable: these cases are omitted without a lease.
  if (leaseExtension === false || leaseMs === undefined) throw new Error('no broker lease');
  return { leaseMs, holdMs: Math.min(3 * leaseMs, leaseExtension.maxTotalMs) };
}

/**
 * C19, C20 and C17's lapse variant: broker leases, kept alive or lost. Each registration is
 * omitted, with the reason, for transports without a lease.
 */
export function registerLeaseCases(suite: Suite<TransportEnv, TransportHarness>): void {
  const noLease =
    suite.harness.capabilities.leaseExtension === false || suite.harness.leaseMs === undefined
      ? 'leaseExtension is false: the broker holds deliveries without a lease'
      : undefined;
  /** The omission reason of one registration, naming which one it is. */
  const unless = (variant: string) => noLease && `${noLease} (${variant})`;

  suite.caseUnless(
    unless('delivery'),
    'C19',
    'lease extension (delivery): extending a slow delivery keeps it from being redelivered',
    async (env) => {
      const { leaseMs, holdMs } = leaseOf(env.harness);
      const source = await env.source();
      const spy = env.spy();
      // Two connections in one group: a lapsed lease would show as a delivery to either.
      for (let i = 0; i < 2; i++) {
        await env.subscribe(await env.connect(), { source, spy, maxInFlight: 1 });
      }
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: 'slow' });
      const { delivery } = (await spy.waitFor(id, 'delivered')).data;

      const until = performance.now() + holdMs;
      while (performance.now() < until) {
        expect(await delivery.extendLease(leaseMs), 'extendLease while held').toBe(true);
        await sleep(leaseMs / 3);
      }
      expect(spy.count('delivered', id), 'redelivered despite the extensions').toBe(1);
      expect(await delivery.ack()).toBe(true);
      await env.quiet();
      expect(spy.count('delivered', id)).toBe(1);
    },
  );

  suite.caseUnless(
    unless('consumer'),
    'C19',
    'lease extension (consumer): the heartbeat keeps a handler slower than the lease from running twice',
    async (env) => {
      const { holdMs } = leaseOf(env.harness);
      const source = await env.source();
      const spy = env.spy();
      const handler = () => sleep(holdMs);
      // The consumer's lease equals the broker's: its heartbeat (every lease/3) extends both.
      for (let i = 0; i < 2; i++) await env.startConsumer({ source, spy, concurrency: 1, handler });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { slow: true } });

      await spy.waitFor(id, 'processed', { timeoutMs: holdMs + env.timing.waitMs });
      expect(spy.count('handler-started', id)).toBe(1);
      expect(spy.count('delivered', id), 'redelivered while the handler ran').toBe(1);
      expect(spy.count('lease-extended', id)).toBeGreaterThanOrEqual(2);
      const acks = spy.all('acked', id).map((r) => r.data.ok);
      expect(acks).toEqual([true]);
    },
  );

  suite.caseUnless(
    unless('delivery'),
    'C20',
    'ack after lease loss (delivery): the lapsed delivery is redelivered and its late ack resolves false',
    async (env) => {
      const { leaseMs } = leaseOf(env.harness);
      const source = await env.source();
      const spy = env.spy();
      for (let i = 0; i < 2; i++) {
        await env.subscribe(await env.connect(), { source, spy, maxInFlight: 1 });
      }
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: 'lapsing' });
      const first = await spy.waitFor(id, 'delivered');
      const second = await spy.waitFor(id, 'delivered', {
        count: 2,
        timeoutMs: leaseMs + env.timing.waitMs,
      });
      expect(second.at - first.at, 'redelivered before the lease lapsed').toBeGreaterThanOrEqual(
        leaseMs - env.timing.delayToleranceMs,
      );
      expect(second.data.message.redelivered).toBe(true);
      expectAttempt(second.data.message, 2, env.capabilities, 'attempt after a lapsed lease');

      const late = first.data.delivery;
      expect(await late.extendLease(leaseMs), 'late extendLease').toBe(false);
      expect(await late.ack(), 'late ack').toBe(false);
      expect(await second.data.delivery.ack()).toBe(true);
      await env.quiet();
      expect(spy.count('delivered', id)).toBe(2);
    },
  );

  suite.caseUnless(
    unless('consumer'),
    'C20',
    'ack after lease loss (consumer): the redelivered copy is caught by dedup — the handler runs once',
    async (env) => {
      const { leaseMs } = leaseOf(env.harness);
      const source = await env.source();
      const spy = env.spy();
      // No heartbeat: the broker lease lapses mid-handler while the store claim (4 leases) holds.
      const handler = () => sleep(leaseMs * 2.5);
      for (let i = 0; i < 2; i++) {
        await env.startConsumer({
          source,
          spy,
          concurrency: 1,
          heartbeat: false,
          leaseMs: leaseMs * 4,
          handler,
        });
      }
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { slow: true } });

      await spy.waitFor(id, 'duplicate', { timeoutMs: leaseMs * 6 + env.timing.waitMs });
      expect(spy.count('handler-started', id)).toBe(1);
      expect(spy.count('in-progress', id), 'the copy saw the live claim').toBeGreaterThanOrEqual(1);
      expect(
        spy.all('acked', id).map((r) => r.data.ok),
        'the slow owner’s ack is late; the duplicate’s is not',
      ).toEqual([false, true]);
      await env.expectNoDeadLetters(source);
    },
  );

  suite.caseUnless(
    unless('consumer, lapsing mid-handler'),
    'C17',
    'concurrency bound (consumer) holds when the broker lease lapses mid-handler (no heartbeat)',
    async (env) => {
      const { leaseMs } = leaseOf(env.harness);
      const source = await env.source();
      const spy = env.spy();
      const handlerMs = leaseMs * 1.5;
      await env.startConsumer({
        source,
        spy,
        concurrency: 1,
        heartbeat: false,
        leaseMs: leaseMs * 4,
        handler: () => sleep(handlerMs),
      });
      const publisher = await env.connect();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await publisher.publish(source, { body: { i } })).requestId);

      await spy.waitForCount('processed', ids.length, {
        timeoutMs: ids.length * leaseMs * 6 + env.timing.waitMs,
      });
      // A lapsed lease frees the broker's slot, not the handler's: the engine must still wait.
      expect(spy.maxRunning, 'handlers running at once with concurrency 1').toBe(1);
      for (const id of ids) expect(spy.count('handler-started', id), id).toBe(1);
    },
  );
}
