import {
  type CompleteRequest,
  type Store,
  StoreUnavailableError,
  type Transport,
} from '@idemq/core';
import { completeEach } from '@idemq/core/adapter';
import { faultyStore } from '@idemq/core/testing';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

/**
 * The store as one process sees it, for simulating that process's crash: after `crash()` (or
 * the scripted step that calls it) every call fails, as a dead process reaches nothing.
 */
function processStore(
  inner: Store,
  script: { afterComplete?: () => Promise<void>; beforeComplete?: () => Promise<void> },
): Store {
  let dead = false;
  const alive =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (dead) throw new StoreUnavailableError('the process is dead (simulated crash)');
      return call(...args);
    };
  const complete = alive(async (r: CompleteRequest) => {
    if (script.beforeComplete) {
      dead = true;
      await script.beforeComplete();
      throw new StoreUnavailableError('the process died before completing (simulated crash)');
    }
    const outcome = await inner.complete(r);
    dead = true;
    await script.afterComplete?.();
    return outcome;
  });
  return {
    claim: alive((r) => inner.claim(r)),
    claimMany: alive((r) => inner.claimMany(r)),
    complete,
    // Through this wrapper's own completion, so a batch dies as a single one does.
    completeMany: (requests) => completeEach(complete, requests),
    fail: alive((r) => inner.fail(r)),
    renew: alive((r) => inner.renew(r)),
    release: alive((r) => inner.release(r)),
    inspect: alive((r) => inner.inspect(r)),
    close: () => inner.close(),
  };
}

/** C30, C31: crashes around the completion mark, TTL expiry, and a store outage. */
export function registerCrashCases(suite: Suite<TransportEnv, TransportHarness>): void {
  const { publishDedup } = suite.harness.capabilities;
  suite.case(
    'C30',
    'crash after the completion mark, before the ack: the redelivery is skipped and acked',
    async (env) => {
      const source = await env.source();
      const store = await env.sharedStore();
      let runs = 0;
      const handler = () => {
        runs += 1;
      };
      const crashing: Transport = await env.connect();
      const spy = env.spy();
      await env.startConsumer({
        source,
        spy,
        transport: crashing,
        store: processStore(store, { afterComplete: () => crashing.close() }),
        handler,
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 1 } });
      // The ack goes through the closed connection: refused, the broker redelivers.
      await spy.waitFor(id, 'acked');
      expect(spy.all('acked', id).map((r) => r.data.ok)).toEqual([false]);

      const next = await env.startConsumer({ source, handler });
      await next.spy.waitFor(id, 'duplicate');
      expect(next.spy.all('acked', id).map((r) => r.data.ok)).toEqual([true]);
      expect(runs).toBe(1);
    },
  );

  suite.case(
    'C30',
    'crash before the completion mark: after the lease the redelivery runs the handler again (documented)',
    async (env) => {
      const source = await env.source();
      const store = await env.sharedStore();
      const leaseMs = env.harness.leaseMs ?? 500;
      const crashing: Transport = await env.connect();
      const spy = env.spy();
      await env.startConsumer({
        source,
        spy,
        leaseMs,
        transport: crashing,
        store: processStore(store, { beforeComplete: () => crashing.close() }),
        handler: () => 'side effect',
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 1 } });
      await spy.waitFor(id, 'handler-finished');

      const next = await env.startConsumer({ source, leaseMs, handler: () => 'side effect again' });
      const rerun = await next.spy.waitFor(id, 'handler-started', {
        timeoutMs: leaseMs * 2 + env.timing.waitMs,
      });
      // The crashed attempt is counted: the takeover is attempt 2.
      expect(rerun.data.ctx.attempt).toBe(2);
      await next.spy.waitFor(id, 'processed');
      expect(spy.count('handler-started', id) + next.spy.count('handler-started', id)).toBe(2);
      expect(await store.inspect({ scope: env.scope, requestId: id })).toMatchObject({
        state: 'COMPLETED',
        attempt: 2,
      });
    },
  );

  suite.caseUnless(
    publishDedup === false
      ? undefined
      : `TTL case: publishDedup drops a re-publish within ${publishDedup.windowMs} ms, longer than a case can wait`,
    'C31',
    'TTL: once the completed record expires the id is processed again',
    async (env) => {
      const source = await env.source();
      const ttlMs = 300;
      let runs = 0;
      const { spy } = await env.startConsumer({
        source,
        completedTtlMs: ttlMs,
        handler: () => {
          runs += 1;
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      const publish = () => publisher.publish(source, { requestId: id, body: { n: 1 } });
      await publish();
      await spy.waitFor(id, 'processed');
      await publish();
      await spy.waitFor(id, 'duplicate');
      expect(runs).toBe(1);

      await sleep(ttlMs + 100);
      await publish();
      await spy.waitFor(id, 'processed', { count: 2 });
      expect(runs).toBe(2);
    },
  );

  suite.case(
    'C31',
    'store outage, fail-closed (default): no handler runs; the message is retried and processed after the outage',
    async (env) => {
      const source = await env.source();
      const store = faultyStore(await env.sharedStore());
      store.setDown(true);
      let runs = 0;
      const { spy } = await env.startConsumer({
        source,
        store,
        storeErrorRetryDelayMs: 50,
        handler: () => {
          runs += 1;
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 1 } });

      const errors = await spy.waitFor(id, 'store-error', { count: 2 });
      expect(errors.data.error).toMatchObject({ code: 'IDEMQ_ERR_STORE_UNAVAILABLE' });
      expect(runs, 'handler ran while the store was down').toBe(0);
      await spy.waitFor(id, 'retried', { count: 2, where: (r) => r.data.ok });
      expect(spy.count('acked', id) + spy.count('rejected', id)).toBe(0);

      store.setDown(false);
      await spy.waitFor(id, 'processed');
      expect(runs).toBe(1);
    },
  );

  suite.case(
    'C31',
    "store outage, onStoreError 'process': the handler runs unclaimed and the message is acked",
    async (env) => {
      const source = await env.source();
      const store = faultyStore(await env.sharedStore());
      store.setDown(true);
      let runs = 0;
      const { spy } = await env.startConsumer({
        source,
        store,
        onStoreError: 'process',
        handler: () => {
          runs += 1;
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 1 } });

      await spy.waitFor(id, 'store-error');
      await spy.waitFor(id, 'acked');
      expect(runs).toBe(1);
      expect(spy.all('acked', id).map((r) => r.data.ok)).toEqual([true]);
      await env.quiet();
      expect(spy.count('delivered', id)).toBe(1);
    },
  );
}
