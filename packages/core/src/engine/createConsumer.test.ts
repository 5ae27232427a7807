import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { InvalidOptionsError, NonRetriableError, StoreRejectedError } from '../errors/index.js';
import { ConsumerStateError } from '../errors/usage.js';
import type { ConsumerEventName, ConsumerEvents } from '../observability/events.js';
import type { StandardSchemaV1 } from '../options/standardSchema.js';
import { memoryStore } from '../store/memoryStore.js';
import type { Store } from '../store/store.js';
import { faultyStore, manualClock } from '../testing/index.js';
import { type MemoryBroker, memoryBroker } from '../transport/memoryBroker.js';
import { type MemoryTransport, memoryTransport } from '../transport/memoryTransport.js';
import type { Delivery, Transport } from '../transport/transport.js';
import { type Consumer, createConsumer } from './createConsumer.js';
import type {
  ConsumedMessage,
  ConsumerOptions,
  ConsumerSettings,
  Handler,
  HandlerContext,
} from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

let counter = 0;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

type RecordedEvent = {
  [E in ConsumerEventName]: { name: E; payload: ConsumerEvents[E] };
}[ConsumerEventName];

/** Records every consumer event; `waitFor` resolves on the first matching one (past or future). */
function recordEvents(consumer: Consumer) {
  const events: RecordedEvent[] = [];
  const waiters = new Set<{
    match: (e: RecordedEvent) => boolean;
    resolve: (e: RecordedEvent) => void;
  }>();
  const names: ConsumerEventName[] = [
    'processed',
    'duplicate',
    'in-progress',
    'retry',
    'dead-letter',
    'lease-extended',
    'lease-lost',
    'store-error',
    'result-omitted',
    'error',
  ];
  for (const name of names) {
    consumer.on(name, (payload) => {
      const event = { name, payload } as RecordedEvent;
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    });
  }
  function waitFor<E extends ConsumerEventName>(
    name: E,
    predicate: (payload: ConsumerEvents[E]) => boolean = () => true,
    timeoutMs = 3_000,
  ): Promise<ConsumerEvents[E]> {
    const match = (e: RecordedEvent) =>
      e.name === name && predicate(e.payload as ConsumerEvents[E]);
    const past = events.find(match);
    if (past) return Promise.resolve(past.payload as ConsumerEvents[E]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        const seen = events.map((e) => e.name);
        reject(
          new Error(
            `timed out waiting for "${name}"; saw ${seen.length} events: ${seen.slice(0, 8).join(', ')}…`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        match,
        resolve: (e: RecordedEvent) => {
          clearTimeout(timer);
          resolve(e.payload as ConsumerEvents[E]);
        },
      };
      waiters.add(waiter);
    });
  }
  const named = <E extends ConsumerEventName>(name: E) =>
    events.filter((e) => e.name === name).map((e) => e.payload as ConsumerEvents[E]);
  /** Resolves once `count` events of `name` were seen. */
  async function waitForCount(name: ConsumerEventName, count: number, timeoutMs = 3_000) {
    const deadline = performance.now() + timeoutMs;
    while (named(name).length < count) {
      if (performance.now() > deadline) {
        throw new Error(`timed out waiting for ${count} "${name}", got ${named(name).length}`);
      }
      await sleep(5);
    }
  }
  return { events, waitFor, named, waitForCount };
}

type HarnessOptions<T, R> = Partial<ConsumerSettings<T>> & {
  handler?: Handler<T, R>;
  broker?: MemoryBroker;
};

/** A consumer on its own queue and scope, with recorded events and a spy on the handler. */
function harness<T = unknown, R = unknown>(options: HarnessOptions<T, R> = {}) {
  const id = ++counter;
  const broker = options.broker ?? memoryBroker();
  const transport =
    (options.transport as MemoryTransport | undefined) ?? memoryTransport({ broker });
  const store = options.store ?? memoryStore();
  const source = options.source ?? `orders-${id}`;
  const scope = options.scope ?? `scope-${id}`;
  /** Every delivery the consumer got from the transport, before the engine saw it. */
  const deliveries: Delivery[] = [];
  const spied: Transport = {
    name: transport.name,
    capabilities: transport.capabilities,
    publish: (destination, message) => transport.publish(destination, message),
    close: () => transport.close(),
    subscribe: (request) =>
      transport.subscribe({
        ...request,
        onDelivery: (delivery) => {
          deliveries.push(delivery);
          request.onDelivery(delivery);
        },
      }),
  };
  const calls: { message: ConsumedMessage<T>; ctx: HandlerContext }[] = [];
  const userHandler = options.handler ?? (() => undefined as R);
  const consumer = createConsumer<T, R>({
    ...options,
    scope,
    transport: spied,
    store,
    source,
    retry: { baseDelayMs: 1, maxDelayMs: 5, jitter: 'none', ...options.retry },
    handler: (message, ctx) => {
      calls.push({ message, ctx });
      return userHandler(message, ctx);
    },
  });
  cleanups.push(() => transport.close());
  cleanups.push(() => consumer.stop({ timeoutMs: 50 }));
  const recorded = recordEvents(consumer);
  const publish = (requestId: string | undefined, body: unknown = { n: 1 }) =>
    transport.publish(source, requestId === undefined ? { body } : { requestId, body });
  return {
    ...recorded,
    consumer,
    broker,
    transport,
    store,
    source,
    scope,
    calls,
    deliveries,
    publish,
  };
}

/** A handler promise that never settles during the test (released at cleanup). */
function forever(): Promise<never> {
  return new Promise((_, reject) => {
    cleanups.unshift(async () => reject(new Error('test over')));
  });
}

/** Reads `count` dead letters of `source` through a fresh subscription. */
async function readDeadLetters(transport: Transport, source: string, count: number) {
  const dead: Delivery[] = [];
  const done = deferred();
  const subscription = await transport.subscribe({
    source: `${source}.dlq`,
    group: `dlq-reader-${++counter}`,
    maxInFlight: 1_000,
    onDelivery: (delivery) => {
      dead.push(delivery);
      if (dead.length >= count) done.resolve();
    },
  });
  await Promise.race([done.promise, sleep(2_000)]);
  await sleep(10); // catch any extra ones
  await subscription.close();
  return dead;
}

function rawPublish(
  broker: MemoryBroker,
  destination: string,
  requestId: unknown,
  body: Uint8Array | string,
) {
  broker.publish({
    requestId,
    body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    headers: {},
    destination,
    publishedAt: Date.now(),
  });
}

describe('createConsumer: processing', () => {
  it('processes N messages once each and acks them', async () => {
    const h = harness<{ n: number }>();
    await h.consumer.start();
    const ids = Array.from({ length: 25 }, (_, i) => `p-${i}`);
    for (const [i, id] of ids.entries()) await h.publish(id, { n: i });
    await h.waitForCount('processed', 25);
    await sleep(20);
    expect(h.calls.map((c) => c.message.requestId).sort()).toEqual([...ids].sort());
    expect(h.calls.map((c) => c.message.value.n).sort((a, b) => a - b)).toEqual(
      ids.map((_, i) => i),
    );
    expect(h.transport.stats(h.source)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
    const record = await h.store.inspect({ scope: h.scope, requestId: 'p-0' });
    expect(record).toMatchObject({ state: 'COMPLETED', attempt: 1 });
  });

  it('hands the handler the decoded message and its context', async () => {
    const h = harness<{ amount: number }>();
    await h.consumer.start();
    await h.transport.publish(h.source, {
      requestId: 'ctx-1',
      body: { amount: 12 },
      headers: { tenant: 't' },
      key: 'acct-9',
    });
    await h.waitFor('processed');
    const [call] = h.calls;
    expect(call?.message).toMatchObject({
      requestId: 'ctx-1',
      value: { amount: 12 },
      headers: { tenant: 't' },
      source: h.source,
      key: 'acct-9',
      deliveryAttempt: 1,
      redelivered: false,
    });
    expect(Buffer.from(call!.message.body).toString()).toBe('{"amount":12}');
    expect(call?.ctx).toMatchObject({ requestId: 'ctx-1', attempt: 1 });
    expect(call?.ctx.fencingToken).toBeGreaterThan(0);
  });

  it('acks a redelivered COMPLETED id as duplicate without running the handler', async () => {
    const h = harness();
    await h.consumer.start();
    await h.publish('twice');
    await h.waitFor('processed', (p) => p.requestId === 'twice');
    await h.publish('twice');
    const duplicate = await h.waitFor('duplicate');
    expect(duplicate).toEqual({ requestId: 'twice', source: h.source });
    expect(h.calls).toHaveLength(1);
    await sleep(10);
    expect(h.transport.stats(h.source)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('a second message with the same id while the first runs is retried, not acked, then a duplicate', async () => {
    const gate = deferred();
    const h = harness({ leaseMs: 100, handler: () => gate.promise });
    await h.consumer.start();
    await h.publish('same');
    await sleep(10);
    await h.publish('same');
    const inProgress = await h.waitFor('in-progress');
    expect(inProgress.requestId).toBe('same');
    expect(inProgress.retryAfterMs).toBeGreaterThan(0);
    expect(inProgress.retryAfterMs).toBeLessThanOrEqual(100);
    expect(h.transport.stats(h.source).delayed).toBe(1);
    gate.resolve();
    await h.waitFor('processed');
    await h.waitFor('duplicate', (p) => p.requestId === 'same');
    expect(h.calls).toHaveLength(1);
  });
});

describe('createConsumer: bad input is dead-lettered, handler never run', () => {
  const schema: StandardSchemaV1<unknown, { amount: number }> = {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) => {
        const amount = (value as { amount?: unknown } | null)?.amount;
        return typeof amount === 'number'
          ? { value: { amount } }
          : { issues: [{ message: 'must be a number', path: [{ key: 'amount' }] }] };
      },
    },
  };

  it.each([
    ['no requestId', undefined, '{"amount":1}', ErrorCodes.REQUEST_ID_MISSING, /no requestId/],
    ['an empty requestId', '', '{"amount":1}', ErrorCodes.REQUEST_ID_MISSING, /empty/],
    [
      'an oversized requestId',
      'x'.repeat(513),
      '{"amount":1}',
      ErrorCodes.REQUEST_ID_TOO_LONG,
      /513 bytes/,
    ],
    [
      'a non-UTF-8 requestId',
      new Uint8Array([0x69, 0x64, 0xff, 0xfe]),
      '{"amount":1}',
      ErrorCodes.REQUEST_ID_INVALID,
      /UTF-8/,
    ],
    ['a numeric requestId', 12345, '{"amount":1}', ErrorCodes.REQUEST_ID_INVALID, /string/],
    [
      'a requestId with a control character',
      'order\u0000-1',
      '{"amount":1}',
      ErrorCodes.REQUEST_ID_INVALID,
      /control character \(U\+0000/,
    ],
    [
      'a requestId in bytes with a control character',
      new Uint8Array([0x69, 0x64, 0x0a]),
      '{"amount":1}',
      ErrorCodes.REQUEST_ID_INVALID,
      /control character \(U\+000A/,
    ],
    ['a malformed JSON body', 'bad-json', '{"amount":', ErrorCodes.PAYLOAD_MALFORMED, /decoded/],
    [
      'a non-UTF-8 body',
      'bad-utf8',
      new Uint8Array([0x22, 0xff, 0x22]),
      ErrorCodes.PAYLOAD_MALFORMED,
      /decoded/,
    ],
    [
      'a schema failure',
      'bad-schema',
      '{"amount":"ten"}',
      ErrorCodes.PAYLOAD_INVALID,
      /amount: must be a number/,
    ],
  ])('%s', async (_name, requestId, body, code, reason) => {
    const h = harness<{ amount: number }>({ schema });
    await h.consumer.start();
    rawPublish(h.broker, h.source, requestId, body);
    await h.publish('good-after', { amount: 5 });

    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({ source: h.source, code });
    expect(dead.reason).toMatch(reason);
    const processed = await h.waitFor('processed');
    expect(processed.requestId).toBe('good-after');
    expect(h.calls.map((c) => c.message.requestId)).toEqual(['good-after']);

    const letters = await readDeadLetters(h.transport, h.source, 1);
    expect(letters).toHaveLength(1);
    expect(letters[0]?.message.headers).toMatchObject({
      'x-idemq-code': code,
      'x-idemq-source': h.source,
      'x-idemq-attempts': '1',
    });
    expect(letters[0]?.message.headers['x-idemq-reason']).toMatch(reason);
    if (typeof requestId === 'string' && requestId.length > 0 && requestId.length <= 512) {
      expect(await h.store.inspect({ scope: h.scope, requestId })).toBeUndefined();
    }
  });

  it('derives a requestId with deriveRequestId when the message has none', async () => {
    const h = harness({
      deriveRequestId: (message) => message.headers['ce-id'],
    });
    await h.consumer.start();
    h.broker.publish({
      requestId: undefined,
      body: Buffer.from('{}'),
      headers: { 'ce-id': 'cloud-1' },
      destination: h.source,
      publishedAt: Date.now(),
    });
    const processed = await h.waitFor('processed');
    expect(processed.requestId).toBe('cloud-1');
  });

  it('a custom decoder that throws dead-letters as malformed', async () => {
    const h = harness({
      decode: () => {
        throw new Error('not protobuf');
      },
    });
    await h.consumer.start();
    await h.publish('proto-1');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({ requestId: 'proto-1', code: ErrorCodes.PAYLOAD_MALFORMED });
    expect(dead.reason).toMatch(/not protobuf/);
    expect(h.calls).toHaveLength(0);
  });
});

describe('createConsumer: failures', () => {
  it('retries transient failures, then processes', async () => {
    let failures = 0;
    const h = harness({
      handler: () => {
        if (failures < 2) {
          failures += 1;
          throw new Error(`transient ${failures}`);
        }
        return 'ok';
      },
    });
    await h.consumer.start();
    await h.publish('flaky');
    const processed = await h.waitFor('processed');
    expect(processed).toMatchObject({ requestId: 'flaky', attempt: 3 });
    expect(h.calls.map((c) => c.ctx.attempt)).toEqual([1, 2, 3]);
    expect(h.calls.map((c) => c.message.deliveryAttempt)).toEqual([1, 2, 3]);
    expect(h.calls[2]?.ctx.previousError).toEqual({ name: 'Error', message: 'transient 2' });
    const retries = h.named('retry');
    expect(retries.map((r) => [r.attempt, r.delayMs, r.error.message])).toEqual([
      [1, 1, 'transient 1'],
      [2, 2, 'transient 2'],
    ]);
    expect(h.named('dead-letter')).toHaveLength(0);
  });

  it('dead-letters a poison message after exactly maxAttempts handler runs', async () => {
    const h = harness({
      retry: { maxAttempts: 4 },
      handler: () => {
        throw new Error('poison');
      },
    });
    await h.consumer.start();
    await h.publish('poison-1');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({
      requestId: 'poison-1',
      attempt: 4,
      code: ErrorCodes.MAX_ATTEMPTS,
    });
    expect(dead.reason).toMatch(/poison/);
    await sleep(20);
    expect(h.calls).toHaveLength(4);
    expect(h.named('retry')).toHaveLength(3);
    const [letter] = await readDeadLetters(h.transport, h.source, 1);
    expect(letter?.message.requestId).toBe('poison-1');
    expect(letter?.message.headers).toMatchObject({
      'x-idemq-attempts': '4',
      'x-idemq-code': ErrorCodes.MAX_ATTEMPTS,
    });
    expect(h.transport.stats(h.source)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('dead-letters a NonRetriableError after one run', async () => {
    const h = harness({
      handler: () => {
        throw new NonRetriableError('account closed');
      },
    });
    await h.consumer.start();
    await h.publish('closed-acct');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({
      requestId: 'closed-acct',
      attempt: 1,
      code: ErrorCodes.HANDLER_NON_RETRIABLE,
      reason: 'account closed',
    });
    await sleep(20);
    expect(h.calls).toHaveLength(1);
    const [letter] = await readDeadLetters(h.transport, h.source, 1);
    expect(letter?.message.headers).toMatchObject({
      'x-idemq-attempts': '1',
      'x-idemq-code': ErrorCodes.HANDLER_NON_RETRIABLE,
      'x-idemq-reason': 'account closed',
    });
  });

  it('dead-letters a key reuse (same id, different body) without running the handler', async () => {
    const h = harness();
    await h.consumer.start();
    await h.publish('reused', { amount: 1 });
    await h.waitFor('processed');
    await h.publish('reused', { amount: 999 });
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({ requestId: 'reused', code: ErrorCodes.KEY_REUSE });
    expect(h.calls).toHaveLength(1);
  });
});

describe('createConsumer: leases and crash loops', () => {
  it('a handler that outlived its lease (no heartbeat) is released with lease-lost, not completed', async () => {
    let call = 0;
    const h = harness({
      heartbeat: false,
      leaseMs: 30,
      concurrency: 2,
      storeResults: true,
      handler: async () => {
        call += 1;
        if (call === 1) {
          await sleep(150);
          return 'zombie';
        }
        return 'owner';
      },
    });
    await h.consumer.start();
    await h.publish('ll-1');
    await sleep(5);
    await h.publish('ll-1'); // the same request again, e.g. a broker redelivery
    const lost = await h.waitFor('lease-lost');
    expect(lost).toEqual({ requestId: 'll-1', source: h.source, attempt: 1, lease: 'store' });
    const processed = await h.waitFor('processed');
    expect(processed).toMatchObject({ requestId: 'll-1', attempt: 2 });
    // The released message comes back and is recognised as done.
    await h.waitFor('duplicate');
    expect(await h.store.inspect({ scope: h.scope, requestId: 'll-1' })).toMatchObject({
      state: 'COMPLETED',
      attempt: 2,
      result: '"owner"',
    });
    expect(h.named('dead-letter')).toHaveLength(0);
  });

  it('a heartbeat that cannot extend the broker lease reports lease-lost (broker) once; the handler finishes', async () => {
    const release = deferred();
    const broker = memoryBroker();
    // Broker lease 40 ms, store lease 300 ms: the store claim outlives the lapsed broker lease.
    const transport = memoryTransport({ broker, leaseMs: 40 });
    const h = harness({ broker, transport, leaseMs: 300, handler: () => release.promise });
    await h.consumer.start();
    await h.publish('bl-1');
    const lost = await h.waitFor('lease-lost');
    expect(lost).toEqual({ requestId: 'bl-1', source: h.source, attempt: 1, lease: 'broker' });
    release.resolve();
    await h.waitFor('processed');
    expect(h.named('lease-lost')).toHaveLength(1);
  });

  it('a claim beyond maxAttempts (owners crashed) is dead-lettered without running the handler', async () => {
    const clock = manualClock();
    const store = memoryStore({ clock });
    const h = harness({ store, retry: { maxAttempts: 3 } });
    // Three owners claimed and died without completing or failing.
    for (let i = 0; i < 3; i++) {
      const claim = await store.claim({
        scope: h.scope,
        requestId: 'crashy',
        leaseMs: 1_000,
        retainMs: 60_000,
      });
      expect(claim).toMatchObject({ status: 'claimed', attempt: i + 1 });
      clock.advance(1_001);
    }
    await h.consumer.start();
    await h.publish('crashy');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({ requestId: 'crashy', code: ErrorCodes.MAX_ATTEMPTS, attempt: 3 });
    expect(h.calls).toHaveLength(0);
    const [letter] = await readDeadLetters(h.transport, h.source, 1);
    expect(letter?.message.headers['x-idemq-attempts']).toBe('3');
  });
});

describe('createConsumer: store outage', () => {
  it('fails closed: no handler run while down, store-error events, processed once it is back', async () => {
    const store = faultyStore(memoryStore());
    store.setDown(true);
    const h = harness({ store, storeErrorRetryDelayMs: 10 });
    await h.consumer.start();
    await h.publish('outage-1');
    await h.waitForCount('store-error', 3);
    expect(h.calls).toHaveLength(0);
    const storeError = h.named('store-error')[0];
    expect(storeError?.requestId).toBe('outage-1');
    expect(storeError?.error).toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE });
    expect(h.named('processed')).toHaveLength(0);
    expect(h.named('dead-letter')).toHaveLength(0);

    store.setDown(false);
    const processed = await h.waitFor('processed');
    expect(processed).toMatchObject({ requestId: 'outage-1', attempt: 1 });
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]?.ctx.attempt).toBe(1);
  });

  it('onStoreError "process" runs the handler unclaimed and reports the store error', async () => {
    const store = faultyStore(memoryStore());
    store.setDown(true);
    const h = harness({ store, onStoreError: 'process' });
    await h.consumer.start();
    await h.publish('open-1');
    const processed = await h.waitFor('processed');
    expect(processed).toMatchObject({ requestId: 'open-1', attempt: 1 });
    expect(h.named('store-error')).toHaveLength(1);
    expect(h.calls[0]?.ctx.fencingToken).toBe(0);
  });

  it('fail-open still dead-letters a poison message after maxAttempts (no endless loop)', async () => {
    const store = faultyStore(memoryStore());
    store.setDown(true);
    const h = harness({
      store,
      onStoreError: 'process',
      retry: { maxAttempts: 3 },
      handler: () => {
        throw new Error('poison while store is down');
      },
    });
    await h.consumer.start();
    await h.publish('open-poison');
    const dead = await h.waitFor('dead-letter', () => true, 500);
    expect(dead).toMatchObject({ requestId: 'open-poison', code: ErrorCodes.MAX_ATTEMPTS });
    expect(h.calls).toHaveLength(3);
  });
});

/**
 * A memory store that refuses the operations named in `refusals` with the error given there,
 * for the ids `refused` accepts, and counts what it was asked.
 */
function refusingStore(
  refusals: Partial<Record<'claim' | 'complete', Error | undefined>>,
  refused: (requestId: string) => boolean = () => true,
) {
  const inner = memoryStore();
  const asked = { claim: 0, complete: 0 };
  const store: Store = {
    ...inner,
    claim: async (request) => {
      asked.claim += 1;
      const error = refusals.claim;
      if (error && refused(request.requestId)) throw error;
      return inner.claim(request);
    },
    complete: async (request) => {
      asked.complete += 1;
      const error = refusals.complete;
      if (error && refused(request.requestId)) throw error;
      return inner.complete(request);
    },
    claimMany: (requests) => inner.claimMany(requests),
    fail: (request) => inner.fail(request),
    renew: (request) => inner.renew(request),
    release: (request) => inner.release(request),
    inspect: (id) => inner.inspect(id),
    close: () => inner.close(),
  };
  return { store, asked, refusals };
}

describe('createConsumer: the store refuses a record or its configuration', () => {
  const wrongType = () =>
    new StoreRejectedError('Redis claim refused the record: WRONGTYPE', { affects: 'record' });

  it('dead-letters a message whose record the store refuses at claim, handler not run; others go on', async () => {
    const { store } = refusingStore({ claim: wrongType() }, (id) => id === 'foreign');
    const h = harness({ store, storeErrorRetryDelayMs: 10 });
    await h.consumer.start();
    await h.publish('foreign');
    await h.publish('healthy');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({
      requestId: 'foreign',
      code: ErrorCodes.STORE_REJECTED,
      reason: 'Redis claim refused the record: WRONGTYPE',
      attempt: undefined,
    });
    await h.waitFor('processed', (p) => p.requestId === 'healthy');
    expect(h.calls.map((c) => c.message.requestId)).toEqual(['healthy']);
    expect(h.named('store-error').map((e) => e.error)).toEqual([
      expect.objectContaining({ code: ErrorCodes.STORE_REJECTED, retriable: false }),
    ]);
    const [letter] = await readDeadLetters(h.transport, h.source, 1);
    expect(letter?.message.headers['x-idemq-code']).toBe(ErrorCodes.STORE_REJECTED);
    // Dead-lettered once, not retried.
    await sleep(30);
    expect(h.named('dead-letter')).toHaveLength(1);
    expect(h.named('store-error')).toHaveLength(1);
  });

  it('fail-open does not run a handler for a record the store refuses: it is dead-lettered too', async () => {
    const { store } = refusingStore({ claim: wrongType() });
    const h = harness({ store, onStoreError: 'process' });
    await h.consumer.start();
    await h.publish('foreign-open');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({ requestId: 'foreign-open', code: ErrorCodes.STORE_REJECTED });
    expect(h.calls).toHaveLength(0);
    expect(h.named('processed')).toHaveLength(0);
  });

  it('a completion the store refuses is asked once, and the message is dead-lettered, not run again', async () => {
    const refusal = new StoreRejectedError('Redis complete refused the record: user_script:1', {
      affects: 'record',
    });
    const { store, asked } = refusingStore({ complete: refusal });
    const h = harness({ store, storeErrorRetryDelayMs: 10 });
    await h.consumer.start();
    await h.publish('refused-completion');
    const dead = await h.waitFor('dead-letter');
    expect(dead).toMatchObject({
      requestId: 'refused-completion',
      code: ErrorCodes.STORE_REJECTED,
      attempt: 1,
    });
    expect(h.calls).toHaveLength(1);
    expect(asked.complete).toBe(1);
    expect(h.named('processed')).toHaveLength(0);
    await sleep(30);
    expect(h.calls).toHaveLength(1);
  });

  it('a refusal of every record (the configuration) is retried like an outage, never dead-lettered', async () => {
    const { store, refusals } = refusingStore({
      claim: new StoreRejectedError('Redis claim refused: NOPERM', { affects: 'store' }),
    });
    const h = harness({ store, storeErrorRetryDelayMs: 10 });
    await h.consumer.start();
    await h.publish('misconfigured');
    await h.waitForCount('store-error', 3);
    expect(h.calls).toHaveLength(0);
    expect(h.named('dead-letter')).toHaveLength(0);
    expect(h.named('store-error')[0]?.error).toMatchObject({
      code: ErrorCodes.STORE_REJECTED,
      affects: 'store',
    });

    refusals.claim = undefined; // the operator fixed the configuration
    await h.waitFor('processed', (p) => p.requestId === 'misconfigured');
    expect(h.calls).toHaveLength(1);
  });
});

describe('createConsumer: concurrency and lifecycle', () => {
  it('never runs more handlers at once than concurrency', async () => {
    let running = 0;
    let peak = 0;
    const h = harness({
      concurrency: 3,
      handler: async () => {
        running += 1;
        peak = Math.max(peak, running);
        await sleep(5);
        running -= 1;
      },
    });
    await h.consumer.start();
    for (let i = 0; i < 20; i++) await h.publish(`c-${i}`);
    await h.waitForCount('processed', 20);
    expect(peak).toBe(3);
    expect(h.calls).toHaveLength(20);
  });

  it('stop() drains in-flight handlers and resolves { drained: true, abandoned: 0 }', async () => {
    const gate = deferred();
    const started = deferred();
    const h = harness({
      handler: async () => {
        started.resolve();
        await gate.promise;
        return 'finished';
      },
    });
    await h.consumer.start();
    await h.publish('drain-1');
    await started.promise;
    let stopped = false;
    const stopping = h.consumer.stop().then((report) => {
      stopped = true;
      return report;
    });
    await sleep(20);
    expect(stopped).toBe(false);
    gate.resolve();
    await expect(stopping).resolves.toEqual({ drained: true, abandoned: 0 });
    expect(h.named('processed').map((p) => p.requestId)).toEqual(['drain-1']);
    expect(h.transport.stats(h.source)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('after stop() no new messages are delivered', async () => {
    const h = harness();
    await h.consumer.start();
    await h.consumer.stop();
    await h.publish('after-stop');
    await sleep(20);
    expect(h.calls).toHaveLength(0);
    expect(h.transport.stats(h.source).ready).toBe(1);
  });

  it('stop({ timeoutMs }) aborts a stuck handler, reports it, and the message goes to another consumer', async () => {
    const broker = memoryBroker();
    const store = memoryStore();
    const source = `stuck-${++counter}`;
    const scope = `stuck-scope-${counter}`;
    let stuckSignal: AbortSignal | undefined;
    const started = deferred();
    const first = harness({
      broker,
      store,
      source,
      scope,
      handler: (_message, ctx) => {
        stuckSignal = ctx.signal;
        started.resolve();
        return forever(); // ignores ctx.signal
      },
    });
    await first.consumer.start();
    await first.publish('stuck-1');
    await started.promise;

    const stopStarted = performance.now();
    const report = await first.consumer.stop({ timeoutMs: 30 });
    expect(performance.now() - stopStarted).toBeLessThan(500);
    expect(report).toEqual({ drained: false, abandoned: 1 });
    expect(stuckSignal?.aborted).toBe(true);
    expect(stuckSignal?.reason).toBeInstanceOf(ConsumerStateError);

    const second = harness({ broker, store, source, scope });
    await second.consumer.start();
    await second.waitForCount('in-progress', 1).catch(() => undefined);
    expect(second.deliveries.length).toBeGreaterThanOrEqual(1);
    // Given back free of an attempt, marked as a redelivery.
    expect(second.deliveries[0]?.message).toMatchObject({
      requestId: 'stuck-1',
      redelivered: true,
      attempt: 1,
    });
  });

  it('a message abandoned by stop() is processed by the next consumer once the old lease lapses', async () => {
    const broker = memoryBroker();
    const store = memoryStore();
    const source = `abandon-${++counter}`;
    const scope = `abandon-scope-${counter}`;
    const started = deferred();
    const first = harness({
      broker,
      store,
      source,
      scope,
      leaseMs: 60,
      handler: () => {
        started.resolve();
        return forever(); // stuck, ignores ctx.signal
      },
    });
    await first.consumer.start();
    await first.publish('abandoned-1');
    await started.promise;
    expect(await first.consumer.stop({ timeoutMs: 20 })).toEqual({ drained: false, abandoned: 1 });

    const second = harness({ broker, store, source, scope, leaseMs: 60 });
    await second.consumer.start();
    const processed = await second.waitFor('processed', () => true, 600);
    expect(processed.requestId).toBe('abandoned-1');
    expect(second.calls[0]?.message.redelivered).toBe(true);
  });

  it('a handler aborted by stop() does not count as a failed attempt', async () => {
    const broker = memoryBroker();
    const store = memoryStore();
    const source = `abort-${++counter}`;
    const scope = `abort-scope-${counter}`;
    const started = deferred();
    const first = harness({
      broker,
      store,
      source,
      scope,
      handler: (_message, ctx) => {
        started.resolve();
        return new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        });
      },
    });
    await first.consumer.start();
    await first.publish('aborted-1');
    await started.promise;
    expect(await first.consumer.stop({ timeoutMs: 20 })).toEqual({ drained: false, abandoned: 1 });

    const second = harness({ broker, store, source, scope });
    await second.consumer.start();
    await second.waitFor('processed');
    expect(second.calls[0]?.message.redelivered).toBe(true);
    // Shutdown is not the handler's fault: the record should not burn an attempt for it.
    expect(second.calls[0]?.ctx.attempt).toBe(1);
    expect(second.calls[0]?.ctx.previousError).toBeUndefined();
  });

  it('stop() while start() is still subscribing leaves nothing consuming', async () => {
    const inner = memoryTransport();
    // A broker whose subscribe takes a while, as a real connection does.
    const slow: Transport = {
      name: 'slow',
      capabilities: inner.capabilities,
      publish: (d, m) => inner.publish(d, m),
      close: () => inner.close(),
      subscribe: async (request) => {
        await sleep(30);
        return inner.subscribe(request);
      },
    };
    cleanups.push(() => inner.close());
    const ran: string[] = [];
    const consumer = createConsumer({
      transport: slow,
      store: memoryStore(),
      scope: 'race',
      source: 'race-q',
      handler: (message) => void ran.push(message.requestId),
    });
    cleanups.push(() => consumer.stop({ timeoutMs: 10 }));
    const starting = consumer.start();
    const report = await consumer.stop();
    await starting.catch(() => undefined);
    expect(report).toEqual({ drained: true, abandoned: 0 });
    await inner.publish('race-q', { requestId: 'after-stop', body: 1 });
    await sleep(30);
    expect(ran).toEqual([]);
  });

  it('[Symbol.asyncDispose] stops the consumer', async () => {
    const h = harness();
    await h.consumer.start();
    await h.consumer[Symbol.asyncDispose]();
    await h.publish('disposed');
    await sleep(20);
    expect(h.calls).toHaveLength(0);
    // Stopped, not broken: it can start again.
    await h.consumer.start();
    await expect(h.waitFor('processed')).resolves.toMatchObject({ requestId: 'disposed' });
  });

  it('start twice → ConsumerStateError', async () => {
    const h = harness();
    await h.consumer.start();
    const error = await h.consumer.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConsumerStateError);
    expect(error).toMatchObject({ code: ErrorCodes.CONSUMER_STATE });
  });

  it('concurrent start() calls: exactly one wins', async () => {
    const h = harness();
    const results = await Promise.allSettled([h.consumer.start(), h.consumer.start()]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('stop is idempotent, also before start and concurrently', async () => {
    const h = harness();
    await expect(h.consumer.stop()).resolves.toEqual({ drained: true, abandoned: 0 });
    await h.consumer.start();
    const [a, b] = await Promise.all([h.consumer.stop(), h.consumer.stop()]);
    expect(a).toEqual({ drained: true, abandoned: 0 });
    expect(b).toEqual(a);
    await expect(h.consumer.stop()).resolves.toEqual({ drained: true, abandoned: 0 });
    await expect(h.consumer.close()).resolves.toBeUndefined();
  });

  it('can start again after stop and keeps processing', async () => {
    const h = harness();
    await h.consumer.start();
    await h.consumer.stop();
    await h.consumer.start();
    await h.publish('restart-1');
    await expect(h.waitFor('processed')).resolves.toMatchObject({ requestId: 'restart-1' });
  });

  it('rejects invalid options with one InvalidOptionsError listing every problem', () => {
    let error: unknown;
    try {
      createConsumer({
        transport: {} as Transport,
        store: {} as Store,
        scope: '',
        source: '',
        handler: 'not a function' as unknown as () => void,
        concurrency: 0,
        storeErrorRetryDelayMs: -1,
        retry: { maxAttempts: 0, baseDelayMs: 500, maxDelayMs: 100 },
      });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    const problems = (error as InvalidOptionsError).problems;
    for (const field of [
      'store',
      'scope',
      'transport',
      'source',
      'handler',
      'concurrency',
      'storeErrorRetryDelayMs',
      'retry.maxAttempts',
      'retry.baseDelayMs must not exceed retry.maxDelayMs',
    ]) {
      expect(
        problems.some((p) => p.startsWith(field)),
        `a problem about ${field}`,
      ).toBe(true);
    }
    expect(problems).toHaveLength(9);
  });

  it('refuses delays longer than the transport can honour, naming the option and the limit', () => {
    const transport = memoryTransport();
    const limited: Transport = {
      ...transport,
      name: 'limited',
      capabilities: { ...transport.capabilities, nativeDelay: { maxMs: 1_000 } },
    };
    const base = { transport: limited, store: memoryStore(), scope: 's', source: 'q' };
    const problemsOf = (extra: Partial<ConsumerSettings<unknown>>) => {
      try {
        createConsumer({ ...base, handler: () => undefined, ...extra });
        return [];
      } catch (thrown) {
        expect(thrown).toBeInstanceOf(InvalidOptionsError);
        return (thrown as InvalidOptionsError).problems;
      }
    };
    // The default retry.maxDelayMs (60 s) is already too long for this transport.
    expect(problemsOf({})).toEqual([
      'retry.maxDelayMs (60000 ms) is longer than transport limited can delay a message (1000 ms)',
    ]);
    expect(
      problemsOf({
        retry: { baseDelayMs: 10, maxDelayMs: 1_000 },
        storeErrorRetryDelayMs: 1_001,
        inProgressRetryMaxDelayMs: 5_000,
      }).map((problem) => problem.split(' ')[0]),
    ).toEqual(['storeErrorRetryDelayMs', 'inProgressRetryMaxDelayMs']);
    expect(
      problemsOf({
        retry: { baseDelayMs: 10, maxDelayMs: 1_000 },
        storeErrorRetryDelayMs: 500,
        inProgressRetryMaxDelayMs: 1_000,
      }),
    ).toEqual([]);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
  ])('options that are %s give an InvalidOptionsError, not a TypeError', (_n, options) => {
    expect(() => createConsumer(options as unknown as ConsumerOptions<unknown, unknown>)).toThrow(
      InvalidOptionsError,
    );
  });

  it('rejects a schema that is not a Standard Schema', () => {
    expect(() =>
      createConsumer({
        transport: memoryTransport(),
        store: memoryStore(),
        scope: 's',
        source: 'q',
        handler: () => undefined,
        schema: { parse: () => 1 } as unknown as StandardSchemaV1,
      }),
    ).toThrow(InvalidOptionsError);
  });
});

describe('createConsumer: events', () => {
  it('carry requestId, attempt and durationMs', async () => {
    let first = true;
    const h = harness({
      handler: async () => {
        await sleep(15);
        if (first) {
          first = false;
          throw new Error('once');
        }
      },
    });
    await h.consumer.start();
    await h.publish('evt-1');
    const processed = await h.waitFor('processed');
    expect(processed).toMatchObject({ requestId: 'evt-1', source: h.source, attempt: 2 });
    expect(processed.durationMs).toBeGreaterThanOrEqual(14);
    expect(processed.durationMs).toBeLessThan(1_000);
    const [retry] = h.named('retry');
    expect(retry).toMatchObject({ requestId: 'evt-1', source: h.source, attempt: 1, delayMs: 1 });
    expect(retry?.error.message).toBe('once');
  });

  it('lease-extended is emitted while a slow handler runs', async () => {
    const h = harness({
      leaseMs: 30,
      handler: () => sleep(80),
    });
    await h.consumer.start();
    await h.publish('slow-evt');
    await h.waitFor('processed');
    const extended = h.named('lease-extended');
    expect(extended.length).toBeGreaterThanOrEqual(2);
    expect(extended[0]).toEqual({ requestId: 'slow-evt', source: h.source, leaseMs: 30 });
  });

  it('a throwing event listener does not break processing', async () => {
    const h = harness();
    for (const name of ['processed', 'duplicate', 'dead-letter', 'retry'] as const) {
      h.consumer.on(name, () => {
        throw new Error(`listener for ${name} is broken`);
      });
    }
    await h.consumer.start();
    for (let i = 0; i < 5; i++) await h.publish(`l-${i}`);
    await h.publish('l-0'); // a duplicate
    await h.waitForCount('processed', 5);
    await h.waitFor('duplicate');
    expect(h.calls).toHaveLength(5);
    expect(h.named('error')).toHaveLength(0);
    await sleep(10);
    expect(h.transport.stats(h.source)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
  });

  it('are published on node:diagnostics_channel as idemq:<event>', async () => {
    const h = harness();
    const seen: unknown[] = [];
    const onMessage = (message: unknown) => void seen.push(message);
    diagnostics.subscribe('idemq:processed', onMessage);
    try {
      await h.consumer.start();
      await h.publish('dc-1');
      await h.waitFor('processed');
    } finally {
      diagnostics.unsubscribe('idemq:processed', onMessage);
    }
    expect(seen).toContainEqual(
      expect.objectContaining({ requestId: 'dc-1', source: h.source, attempt: 1 }),
    );
  });

  it('on() returns an unsubscribe function', async () => {
    const h = harness();
    const seen: string[] = [];
    const off = h.consumer.on('processed', (p) => void seen.push(p.requestId));
    await h.consumer.start();
    await h.publish('u-1');
    await h.waitFor('processed', (p) => p.requestId === 'u-1');
    off();
    await h.publish('u-2');
    await h.waitFor('processed', (p) => p.requestId === 'u-2');
    expect(seen).toEqual(['u-1']);
  });
});

describe('createConsumer: a result that cannot be stored', () => {
  it.each<[string, () => unknown, 'too-large' | 'not-serializable']>([
    ['a 100 000-byte result', () => 'x'.repeat(100_000), 'too-large'],
    ['a BigInt', () => 10n, 'not-serializable'],
  ])(
    'a handler that returned %s never runs again: acked, completed without it, the copy a duplicate',
    async (_name, make, reason) => {
      const h = harness<unknown, unknown>({ storeResults: true, handler: () => make() });
      await h.consumer.start();
      await h.publish('unstorable-1');
      await h.waitFor('processed', (p) => p.requestId === 'unstorable-1');
      expect(await h.waitFor('result-omitted')).toEqual({
        requestId: 'unstorable-1',
        scope: h.scope,
        source: h.source,
        reason,
        error: expect.objectContaining({
          code:
            reason === 'too-large'
              ? ErrorCodes.RESULT_TOO_LARGE
              : ErrorCodes.RESULT_NOT_SERIALIZABLE,
        }),
      });
      await h.publish('unstorable-1');
      await h.waitFor('duplicate', (p) => p.requestId === 'unstorable-1');
      expect(h.calls).toHaveLength(1);
      expect(h.named('retry')).toEqual([]);
      expect(h.named('dead-letter')).toEqual([]);
      expect(await h.store.inspect({ scope: h.scope, requestId: 'unstorable-1' })).toMatchObject({
        state: 'COMPLETED',
        resultOmitted: reason,
      });
    },
  );
});
