import { DeadLetterHeaders, ErrorCodes, isIdemqError } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { gate, sleep } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Broker-stamped publish times may come from the broker's clock. */
const CLOCK_TOLERANCE_MS = 5_000;

/** C25: what a resolved publish means; C26–C29: ids are stamped, and each id's handler runs once. */
export function registerDedupCases(suite: Suite<TransportEnv, TransportHarness>): void {
  const { consumerGroups, publishDedup } = suite.harness.capabilities;
  /** Why a case that publishes one id twice cannot reach the engine: the broker drops the copy. */
  const republishDropped =
    publishDedup === false
      ? undefined
      : `publishDedup: the broker drops a re-publish of an id within ${publishDedup.windowMs} ms (SQS FIFO), so the copy never reaches the engine`;
  /** Two copies of one id in flight at once need two groups, or two publishes that both arrive. */
  const noConcurrentCopies = consumerGroups ? undefined : republishDropped;
  /** An omission reason naming which registration of its case it is. */
  const naming = (reason: string | undefined, variant: string) =>
    reason && `${reason} (${variant})`;

  suite.case(
    'C25',
    'publisher confirms: a resolved publish survives its connection closing at once; a message over maxPayloadBytes is refused before sending, typed and not retriable',
    async (env) => {
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(await env.connect(), { source, spy, react: (d) => void d.ack() });

      const publisher = await env.connect();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await publisher.publish(source, { body: { i } })).requestId);
      }
      await publisher.close(); // at once: only what the broker already holds can arrive
      for (const id of ids) await spy.waitFor(id, 'delivered');

      const maxBytes = env.capabilities.maxPayloadBytes;
      if (maxBytes === null) return;
      const other = await env.connect();
      const tooBig = env.id('too-big');
      const refused = await other
        .publish(source, { requestId: tooBig, body: new Uint8Array(maxBytes + 1) })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused, `a ${maxBytes + 1}-byte body was published`).toBeDefined();
      expect(isIdemqError(refused), String(refused)).toBe(true);
      expect(refused).toMatchObject({ code: ErrorCodes.PUBLISH_FAILED, retriable: false });
      // Nothing of it reached the broker: a later message arrives, the refused one never does.
      await env.sentinel(other, source, spy);
      await env.quiet();
      expect(spy.count('delivered', tooBig)).toBe(0);
    },
  );

  suite.case(
    'C26',
    'publisher id stamping: a missing id becomes a UUIDv7, a given one is kept; the same id twice runs once',
    async (env) => {
      const transport = await env.connect();
      const source = await env.source();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy, react: async (d) => void (await d.ack()) });

      const before = Date.now();
      const stamped = await transport.publish(source, { body: 'no id' });
      const after = Date.now();
      const another = await transport.publish(source, { body: 'no id either' });
      expect(stamped.requestId).toMatch(UUID_V7);
      expect(another.requestId).toMatch(UUID_V7);
      expect(another.requestId).not.toBe(stamped.requestId);
      const { message } = (await spy.waitFor(stamped.requestId, 'delivered')).data;
      expect(message.requestId).toBe(stamped.requestId);
      expect(message.source).toBe(source);
      if (message.publishedAt !== undefined) {
        expect(message.publishedAt).toBeGreaterThanOrEqual(before - CLOCK_TOLERANCE_MS);
        expect(message.publishedAt).toBeLessThanOrEqual(after + CLOCK_TOLERANCE_MS);
      }

      const given = env.id('given');
      expect((await transport.publish(source, { requestId: given, body: 'x' })).requestId).toBe(
        given,
      );
      expect((await spy.waitFor(given, 'delivered')).data.message.requestId).toBe(given);

      // The same id published twice: one handler execution, every delivery settled.
      const consumed = await env.source();
      let runs = 0;
      const { spy: consumerSpy } = await env.startConsumer({
        source: consumed,
        handler: () => {
          runs += 1;
        },
      });
      const twice = env.id('twice');
      await transport.publish(consumed, { requestId: twice, body: { n: 1 } });
      await consumerSpy.waitFor(twice, 'processed');
      await transport.publish(consumed, { requestId: twice, body: { n: 1 } });
      // A broker that deduplicates by id (SQS FIFO) may deliver it only once.
      await env.quiet();
      expect(runs).toBe(1);
      const deliveries = consumerSpy.count('delivered', twice);
      expect(consumerSpy.all('acked', twice).map((r) => r.data.ok)).toEqual(
        Array.from({ length: deliveries }, () => true),
      );
    },
  );

  suite.caseUnless(
    naming(republishDropped, 'after success'),
    'C27',
    'dedup after success: the same message again is acked as a duplicate without running the handler',
    async (env) => {
      const source = await env.source();
      let runs = 0;
      const { spy } = await env.startConsumer({
        source,
        handler: () => {
          runs += 1;
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { amount: 1 } });
      await spy.waitFor(id, 'processed');
      await publisher.publish(source, { requestId: id, body: { amount: 1 } });
      const duplicate = await spy.waitFor(id, 'duplicate');
      expect(duplicate.data).toEqual({ requestId: id, source });
      expect(runs).toBe(1);
      expect(spy.all('acked', id).map((r) => r.data.ok)).toEqual([true, true]);
      expect(spy.count('retry', id) + spy.count('dead-letter', id)).toBe(0);
    },
  );

  suite.caseUnless(
    naming(republishDropped, 'key reuse'),
    'C27',
    'key reuse: the same id with another payload is dead-lettered as key reuse, its handler not run',
    async (env) => {
      const source = await env.source();
      const bodies: unknown[] = [];
      const { spy } = await env.startConsumer({
        source,
        handler: (message) => {
          bodies.push(message.value);
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { amount: 1 } });
      await spy.waitFor(id, 'processed');
      await publisher.publish(source, { requestId: id, body: { amount: 2 } });
      const dead = await spy.waitFor(id, 'dead-letter');
      expect(dead.data).toMatchObject({ requestId: id, source, code: ErrorCodes.KEY_REUSE });
      expect(bodies).toEqual([{ amount: 1 }]);
      const [letter] = await env.deadLetters(source, 1);
      expect(letter?.message.headers[DeadLetterHeaders.code]).toBe(ErrorCodes.KEY_REUSE);
    },
  );

  suite.caseUnless(
    naming(noConcurrentCopies, 'concurrent copies'),
    'C28',
    'dedup under concurrency: two consumers get one id at once — one runs, the other waits, then skips it',
    async (env) => {
      const source = await env.source();
      const spy = env.spy();
      const release = gate();
      env.defer('handler gate', () => release.open());
      let runs = 0;
      const handler = async () => {
        runs += 1;
        await release.promise;
      };
      // Two copies at once on one scope: two groups get one publish each, or — where all
      // subscribers of a source compete (SQS) — two publishes reach two consumers of one group.
      const leaseMs = env.harness.leaseMs ?? 600;
      for (const label of ['one', 'two']) {
        const group = consumerGroups ? env.group(label) : env.consumerGroup;
        await env.startConsumer({ source, group, spy, leaseMs, handler });
      }
      const publisher = await env.connect();
      const id = env.id();
      for (let copy = consumerGroups ? 1 : 2; copy > 0; copy--) {
        await publisher.publish(source, { requestId: id, body: { n: 1 } });
      }

      await spy.waitFor(id, 'handler-started');
      const waiting = await spy.waitFor(id, 'in-progress');
      expect(waiting.data.retryAfterMs).toBeGreaterThan(0);
      expect(waiting.data.retryAfterMs).toBeLessThanOrEqual(leaseMs);
      release.open();

      await spy.waitFor(id, 'processed');
      await spy.waitFor(id, 'duplicate', { timeoutMs: leaseMs + env.timing.waitMs });
      expect(runs).toBe(1);
      expect(spy.all('acked', id).map((r) => r.data.ok)).toEqual([true, true]);
      expect(spy.count('dead-letter', id)).toBe(0);
    },
  );

  suite.caseUnless(
    naming(noConcurrentCopies, 'store lease takeover'),
    'C28',
    'store lease lapses mid-handler (no heartbeat): the takeover runs as attempt 2, the slow owner learns lease-lost',
    async (env) => {
      const source = await env.source();
      const store = await env.sharedStore();
      const spy = env.spy();
      const leaseMs = 200;
      // The taker's retry after the lease may be rounded up to the broker's delay granularity
      // (whole seconds on SQS): the slow owner outlasts that too, so the takeover comes first.
      const slowMs = leaseMs * 2.5 + env.timing.retryDelayMs;
      const handler = (_message: unknown, ctx: { attempt: number }) =>
        ctx.attempt === 1 ? sleep(slowMs) : undefined;
      // Two copies, one scope (two groups, or two publishes to one group where subscribers all
      // compete): the second copy waits out the lease, then takes over.
      for (const label of ['slow', 'taker']) {
        await env.startConsumer({
          source,
          group: consumerGroups ? env.group(label) : env.consumerGroup,
          spy,
          leaseMs,
          heartbeat: false,
          handler,
        });
      }
      const publisher = await env.connect();
      const id = env.id();
      for (let copy = consumerGroups ? 1 : 2; copy > 0; copy--) {
        await publisher.publish(source, { requestId: id, body: { n: 1 } });
      }

      const timeoutMs = leaseMs * 5 + env.timing.waitMs;
      expect((await spy.waitFor(id, 'processed', { timeoutMs })).data.attempt).toBe(2);
      expect((await spy.waitFor(id, 'lease-lost', { timeoutMs })).data.attempt).toBe(1);
      // The slow owner's copy is given back and then recognised as done.
      await spy.waitFor(id, 'duplicate', { timeoutMs });
      const attempts = spy.all('handler-started', id).map((r) => r.data.ctx.attempt);
      expect(attempts).toEqual([1, 2]);
      expect(await store.inspect({ scope: env.scope, requestId: id })).toMatchObject({
        state: 'COMPLETED',
        attempt: 2,
      });
      expect(spy.count('dead-letter', id)).toBe(0);
    },
  );

  suite.case(
    'C29',
    'dedup after failure: a failed handler leaves no completion mark, and the redelivery processes it',
    async (env) => {
      const source = await env.source();
      const store = await env.sharedStore();
      const retryDelayMs = env.timing.retryDelayMs;
      const { spy } = await env.startConsumer({
        source,
        retry: { baseDelayMs: retryDelayMs, maxDelayMs: retryDelayMs },
        handler: (_message, ctx) => {
          if (ctx.attempt === 1) throw new Error('first try fails');
          return 'ok';
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      await publisher.publish(source, { requestId: id, body: { n: 1 } });

      const retry = await spy.waitFor(id, 'retry');
      expect(retry.data).toMatchObject({ attempt: 1, delayMs: retryDelayMs });
      // Between the failure and the redelivery the record is FAILED — never COMPLETED.
      const failed = await store.inspect({ scope: env.scope, requestId: id });
      expect(failed).toMatchObject({
        state: 'FAILED',
        attempt: 1,
        lastError: { message: 'first try fails' },
      });

      await spy.waitFor(id, 'processed', { timeoutMs: retryDelayMs + env.timing.waitMs });
      const runs = spy.all('handler-started', id).map((r) => r.data.ctx);
      expect(runs.map((ctx) => ctx.attempt)).toEqual([1, 2]);
      expect(runs[1]?.previousError).toMatchObject({ message: 'first try fails' });
      expect(await store.inspect({ scope: env.scope, requestId: id })).toMatchObject({
        state: 'COMPLETED',
        attempt: 2,
      });
    },
  );
}
