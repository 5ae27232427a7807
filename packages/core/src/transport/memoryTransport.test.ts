import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { TransportClosedError } from '../errors/transport.js';
import { memoryBroker } from './memoryBroker.js';
import { type MemoryTransport, memoryTransport } from './memoryTransport.js';
import type { Delivery, Subscription } from './transport.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sequence = 0;
/** A unique queue name per test, so tests never see each other's data. */
const uniqueQueue = () => `q${++sequence}-${Math.random().toString(36).slice(2, 8)}`;

const opened: MemoryTransport[] = [];
function transport(options: Parameters<typeof memoryTransport>[0] = {}): MemoryTransport {
  const t = memoryTransport(options);
  opened.push(t);
  return t;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

/** Subscribes and records deliveries; `waitFor(n)` resolves once n have arrived. */
async function collect(
  t: MemoryTransport,
  source: string,
  options: { group?: string; maxInFlight?: number } = {},
) {
  const deliveries: Delivery[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const subscription: Subscription = await t.subscribe({
    source,
    maxInFlight: options.maxInFlight ?? 100,
    ...(options.group === undefined ? {} : { group: options.group }),
    onDelivery: (delivery) => {
      deliveries.push(delivery);
      for (const waiter of [...waiters]) {
        if (deliveries.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    },
  });
  const waitFor = (count: number, timeoutMs = 2_000) =>
    new Promise<Delivery[]>((resolve, reject) => {
      if (deliveries.length >= count) return resolve(deliveries.slice());
      const timer = setTimeout(
        () =>
          reject(new Error(`timed out waiting for ${count} deliveries, got ${deliveries.length}`)),
        timeoutMs,
      );
      waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(deliveries.slice());
        },
      });
    });
  return { deliveries, subscription, waitFor };
}

describe('memoryTransport publish', () => {
  it('stamps a UUIDv7 requestId when none is given', async () => {
    const t = transport();
    const q = uniqueQueue();
    const receipt = await t.publish(q, { body: { a: 1 } });
    expect(receipt.requestId).toMatch(UUID_V7);
    const { waitFor } = await collect(t, q);
    const [delivery] = await waitFor(1);
    expect(delivery?.message.requestId).toBe(receipt.requestId);
  });

  it('stamps distinct ids', async () => {
    const t = transport();
    const q = uniqueQueue();
    const ids = await Promise.all([1, 2, 3].map((n) => t.publish(q, { body: n })));
    expect(new Set(ids.map((r) => r.requestId)).size).toBe(3);
  });

  it('keeps a given requestId, body bytes, headers and key', async () => {
    const t = transport();
    const q = uniqueQueue();
    const receipt = await t.publish(q, {
      requestId: 'order-42',
      body: { amount: 10 },
      headers: { tenant: 'acme' },
      key: 'k1',
    });
    expect(receipt).toEqual({ requestId: 'order-42' });
    const { waitFor } = await collect(t, q);
    const [delivery] = await waitFor(1);
    expect(delivery?.message).toMatchObject({
      requestId: 'order-42',
      headers: { tenant: 'acme' },
      key: 'k1',
      source: q,
      attempt: 1,
      attemptSource: 'exact',
      redelivered: false,
      contentType: 'application/json',
    });
    expect(text(delivery!.message.body)).toBe('{"amount":10}');
  });

  it.each([
    ['empty', '', ErrorCodes.REQUEST_ID_MISSING],
    ['whitespace', '   ', ErrorCodes.REQUEST_ID_MISSING],
    ['lone surrogate', 'id-\uD800', ErrorCodes.REQUEST_ID_INVALID],
    ['control character', 'id-\u0007', ErrorCodes.REQUEST_ID_INVALID],
    ['513 bytes', 'x'.repeat(513), ErrorCodes.REQUEST_ID_TOO_LONG],
  ])('refuses an invalid given requestId (%s) with a typed error', async (_name, id, code) => {
    const t = transport();
    const q = uniqueQueue();
    await expect(t.publish(q, { requestId: id, body: 'x' })).rejects.toMatchObject({
      name: 'InvalidRequestIdError',
      code,
    });
    expect(t.stats(q).ready).toBe(0);
  });

  it('refuses to publish once closed', async () => {
    const t = transport();
    await t.close();
    const error = await t.publish(uniqueQueue(), { body: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportClosedError);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSPORT_CLOSED });
  });
});

describe('memoryTransport delivery', () => {
  it('never hands out more than maxInFlight unsettled deliveries', async () => {
    const t = transport();
    const q = uniqueQueue();
    for (let i = 0; i < 5; i++) await t.publish(q, { requestId: `m${i}`, body: i });
    const { deliveries, waitFor } = await collect(t, q, { maxInFlight: 2 });
    await waitFor(2);
    await sleep(20);
    expect(deliveries).toHaveLength(2);
    expect(t.stats(q)).toEqual({ ready: 3, inFlight: 2, delayed: 0 });
    await deliveries[0]!.ack();
    await waitFor(3);
    await sleep(20);
    expect(deliveries).toHaveLength(3);
    expect(deliveries.map((d) => d.message.requestId)).toEqual(['m0', 'm1', 'm2']);
  });

  it('does not redeliver a retried message before its delay', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'r1', body: 1 });
    const { deliveries, waitFor } = await collect(t, q);
    const [first] = await waitFor(1);
    const retriedAt = performance.now();
    await first!.retry({ delayMs: 120 });
    expect(t.stats(q)).toMatchObject({ delayed: 1, inFlight: 0 });
    await sleep(60);
    expect(deliveries).toHaveLength(1);
    const [, second] = await waitFor(2);
    expect(performance.now() - retriedAt).toBeGreaterThanOrEqual(115);
    expect(second?.message).toMatchObject({ requestId: 'r1', attempt: 2, redelivered: true });
  });

  it('counts attempts exactly: retry counts, release does not', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'a1', body: 1 });
    const { waitFor } = await collect(t, q);
    const attempts: number[] = [];
    let all = await waitFor(1);
    attempts.push(all[0]!.message.attempt);
    await all[0]!.retry({ delayMs: 0 });
    all = await waitFor(2);
    attempts.push(all[1]!.message.attempt);
    await all[1]!.release();
    all = await waitFor(3);
    attempts.push(all[2]!.message.attempt);
    await all[2]!.release();
    all = await waitFor(4);
    attempts.push(all[3]!.message.attempt);
    await all[3]!.retry();
    all = await waitFor(5);
    attempts.push(all[4]!.message.attempt);
    expect(attempts).toEqual([1, 2, 2, 2, 3]);
    expect(all.map((d) => d.message.redelivered)).toEqual([false, true, true, true, true]);
    expect(all[4]!.message.attemptSource).toBe('exact');
  });

  it('reject lands in <source>.dlq with the x-idemq-* headers', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'bad-1', body: 'payload', headers: { trace: 't1' } });
    const { waitFor } = await collect(t, q);
    const [delivery] = await waitFor(1);
    await expect(
      delivery!.reject({ reason: 'no such account', code: 'IDEMQ_ERR_X', attempts: 4 }),
    ).resolves.toBe(true);
    expect(t.stats(q)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
    expect(t.stats(`${q}.dlq`).ready).toBe(1);

    const dlq = await collect(t, `${q}.dlq`);
    const [dead] = await dlq.waitFor(1);
    expect(dead?.message.requestId).toBe('bad-1');
    expect(text(dead!.message.body)).toBe('payload');
    expect(dead?.message.headers).toEqual({
      trace: 't1',
      'x-idemq-reason': 'no such account',
      'x-idemq-code': 'IDEMQ_ERR_X',
      'x-idemq-attempts': '4',
      'x-idemq-source': q,
    });
  });

  it('reject without attempts writes the transport attempt count', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'bad-2', body: 'p' });
    const { waitFor } = await collect(t, q);
    await (await waitFor(1))[0]!.retry({ delayMs: 0 });
    await (await waitFor(2))[1]!.reject({ reason: 'nope' });
    const [dead] = await (await collect(t, `${q}.dlq`)).waitFor(1);
    expect(dead?.message.headers['x-idemq-attempts']).toBe('2');
    // No code given: the header is absent rather than empty.
    expect(dead?.message.headers).not.toHaveProperty('x-idemq-code');
  });

  it('caps a long reason as every transport does', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'bad-3', body: 'p' });
    const { waitFor } = await collect(t, q);
    await (await waitFor(1))[0]!.reject({ reason: 'x'.repeat(10_000) });
    const [dead] = await (await collect(t, `${q}.dlq`)).waitFor(1);
    expect(dead?.message.headers['x-idemq-reason']).toHaveLength(4_096);
  });

  it('honours a custom deadLetterSuffix', async () => {
    const t = transport({ deadLetterSuffix: '-dead' });
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'd', body: 1 });
    const [delivery] = await (await collect(t, q)).waitFor(1);
    await delivery!.reject({ reason: 'r' });
    expect(t.stats(`${q}-dead`).ready).toBe(1);
    expect(t.stats(`${q}.dlq`).ready).toBe(0);
  });
});

describe('memoryTransport connections', () => {
  it('a running subscription keeps the process alive, as a broker connection does; a closed one not', async () => {
    // A message retried after 300 ms: nothing but the subscription waits for it. Runs the
    // built package, as a user's script would.
    const script = `
      import { memoryTransport } from '@idemq/core';
      const transport = memoryTransport();
      let subscription;
      const redelivered = new Promise((resolve) => {
        subscription = transport.subscribe({
          source: 's',
          maxInFlight: 1,
          onDelivery: (delivery) => {
            if (delivery.message.attempt === 1) void delivery.retry({ delayMs: 300 });
            else void delivery.ack().then(resolve);
          },
        });
      });
      await transport.publish('s', { body: 'x' });
      await redelivered;
      console.log('redelivered');
      await (await subscription).close();
      await transport.publish('s', { body: 'left for nobody' });
    `;
    const run = promisify(execFile);
    const packageDir = fileURLToPath(new URL('../..', import.meta.url));
    const started = performance.now();
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageDir,
      timeout: 10_000,
    });
    expect(stdout.trim()).toBe('redelivered');
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it('close() gives unsettled deliveries to another transport on the same broker, redelivered', async () => {
    const broker = memoryBroker();
    const crashing = transport({ broker });
    const survivor = transport({ broker });
    const q = uniqueQueue();
    await crashing.publish(q, { requestId: 'c1', body: 1 });
    await crashing.publish(q, { requestId: 'c2', body: 2 });
    const first = await collect(crashing, q);
    const lost = await first.waitFor(2);
    await lost[0]!.ack();

    const second = await collect(survivor, q);
    await sleep(10);
    expect(second.deliveries).toHaveLength(0);
    await crashing.close();
    const [redelivered] = await second.waitFor(1);
    // A dropped connection is a crash: the broker counts the attempt, like a real one.
    expect(redelivered?.message).toMatchObject({ requestId: 'c2', redelivered: true, attempt: 2 });
    await sleep(10);
    expect(second.deliveries).toHaveLength(1); // the acked one is gone for good
  });

  it('settling after close resolves false and changes nothing', async () => {
    const broker = memoryBroker();
    const t = transport({ broker });
    const other = transport({ broker });
    const q = uniqueQueue();
    await t.publish(q, { requestId: 's1', body: 1 });
    const [delivery] = await (await collect(t, q)).waitFor(1);
    await t.close();
    await expect(delivery!.ack()).resolves.toBe(false);
    await expect(delivery!.reject({ reason: 'late' })).resolves.toBe(false);
    await expect(delivery!.extendLease(1_000)).resolves.toBe(false);
    expect(broker.stats(`${q}.dlq`).ready).toBe(0);
    const [again] = await (await collect(other, q)).waitFor(1);
    expect(again?.message.requestId).toBe('s1');
  });

  it('subscription.close() gives unsettled deliveries back without counting an attempt', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'sc', body: 1 });
    const first = await collect(t, q);
    const [delivery] = await first.waitFor(1);
    await first.subscription.close();
    await expect(delivery!.ack()).resolves.toBe(false);
    const [again] = await (await collect(t, q)).waitFor(1);
    expect(again?.message).toMatchObject({ requestId: 'sc', attempt: 1, redelivered: true });
  });

  it('an unsettled delivery past leaseMs is redelivered and the old one cannot be settled', async () => {
    const t = transport({ leaseMs: 50 });
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'v1', body: 1 });
    const { waitFor } = await collect(t, q);
    const [stale] = await waitFor(1);
    const [, fresh] = await waitFor(2, 1_000);
    expect(fresh?.message).toMatchObject({ requestId: 'v1', attempt: 2, redelivered: true });
    await expect(stale!.ack()).resolves.toBe(false);
    await expect(stale!.extendLease(1_000)).resolves.toBe(false);
    await expect(fresh!.ack()).resolves.toBe(true);
    expect(t.stats(q)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('extendLease keeps a delivery past leaseMs', async () => {
    const t = transport({ leaseMs: 40 });
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'v2', body: 1 });
    const { deliveries, waitFor } = await collect(t, q);
    const [delivery] = await waitFor(1);
    await expect(delivery!.extendLease(300)).resolves.toBe(true);
    await sleep(120);
    expect(deliveries).toHaveLength(1);
    await expect(delivery!.ack()).resolves.toBe(true);
  });

  it('subscription.stop() stops fetching but handed-out deliveries can still be settled', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'st1', body: 1 });
    const first = await collect(t, q);
    const [delivery] = await first.waitFor(1);
    await first.subscription.stop();
    await t.publish(q, { requestId: 'st2', body: 2 });
    await sleep(20);
    expect(first.deliveries).toHaveLength(1);
    await expect(delivery!.ack()).resolves.toBe(true);
    await sleep(10);
    expect(first.deliveries).toHaveLength(1);
    expect(t.stats(q)).toEqual({ ready: 1, inFlight: 0, delayed: 0 });
  });

  it('declares lease extension only when leaseMs is set', () => {
    expect(transport().capabilities.leaseExtension).toBe(false);
    expect(transport({ leaseMs: 10 }).capabilities.leaseExtension).not.toBe(false);
  });
});

describe('memoryTransport groups', () => {
  it('two groups each get every message', async () => {
    const t = transport();
    const q = uniqueQueue();
    const a = await collect(t, q, { group: 'a' });
    const b = await collect(t, q, { group: 'b' });
    for (const id of ['g1', 'g2', 'g3']) await t.publish(q, { requestId: id, body: id });
    const fromA = await a.waitFor(3);
    const fromB = await b.waitFor(3);
    expect(fromA.map((d) => d.message.requestId)).toEqual(['g1', 'g2', 'g3']);
    expect(fromB.map((d) => d.message.requestId)).toEqual(['g1', 'g2', 'g3']);
  });

  it('competing subscribers in one group split the load, each message once', async () => {
    const broker = memoryBroker();
    const t1 = transport({ broker });
    const t2 = transport({ broker });
    const q = uniqueQueue();
    const one = await collect(t1, q, { group: 'workers' });
    const two = await collect(t2, q, { group: 'workers' });
    const ids = Array.from({ length: 10 }, (_, i) => `w${i}`);
    for (const id of ids) await t1.publish(q, { requestId: id, body: id });
    await sleep(20);
    const seen = [...one.deliveries, ...two.deliveries].map((d) => d.message.requestId);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(one.deliveries.length).toBeGreaterThan(0);
    expect(two.deliveries.length).toBeGreaterThan(0);
  });

  it('messages published before any subscriber are held for the first group', async () => {
    const t = transport();
    const q = uniqueQueue();
    await t.publish(q, { requestId: 'early-1', body: 1 });
    await t.publish(q, { requestId: 'early-2', body: 2 });
    expect(t.stats(q).ready).toBe(2);
    const first = await collect(t, q, { group: 'first' });
    const got = await first.waitFor(2);
    expect(got.map((d) => d.message.requestId)).toEqual(['early-1', 'early-2']);
    // A later group is new: it only sees what is published after it exists.
    const late = await collect(t, q, { group: 'late' });
    await t.publish(q, { requestId: 'after', body: 3 });
    const lateGot = await late.waitFor(1);
    await sleep(10);
    expect(late.deliveries.map((d) => d.message.requestId)).toEqual(['after']);
    expect(lateGot).toHaveLength(1);
  });
});
