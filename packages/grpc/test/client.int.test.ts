import {
  type Client,
  type ClientOptions,
  InterceptingCall,
  type Interceptor,
  Metadata,
  status,
} from '@grpc/grpc-js';
import { uuidv7 } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type IdempotencyClientOptions,
  idempotencyClientInterceptor,
} from '../src/client/index.js';
import { encodeRetryStatus, STATUS_DETAILS_KEY } from '../src/statusDetails.js';
import {
  type Answer,
  place,
  type Script,
  startTestServer,
  type TestServer,
  testClient,
  watch,
} from './clientServer.js';

const fast: IdempotencyClientOptions = { baseDelayMs: 1, maxDelayMs: 10 };
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const OK: Answer = { ok: true };
/** libuv times timers on a millisecond clock read once per loop turn: a wait can measure ~1 ms short. */
const TIMER_SLACK_MS = 2;

let server: TestServer | undefined;
const clients: Client[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  server?.close();
  server = undefined;
});

async function setUp(
  script: Script,
  options: IdempotencyClientOptions = fast,
  channel: ClientOptions = {},
): Promise<{ server: TestServer; client: Client }> {
  server = await startTestServer(script);
  const client = testClient(server.address, {
    interceptors: [idempotencyClientInterceptor(options)],
    ...channel,
  });
  clients.push(client);
  return { server, client };
}

const metadataOf = (entries: Record<string, string | Buffer>): Metadata => {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(entries)) metadata.set(name, value);
  return metadata;
};

/** ABORTED with a `google.rpc.RetryInfo` advising `delayMs`. */
const abortedFor = (delayMs: number): Answer => ({
  code: status.ABORTED,
  trailers: metadataOf({
    [STATUS_DETAILS_KEY]: encodeRetryStatus(status.ABORTED, 'in progress', delayMs),
  }),
});

const failFirst =
  (times: number, answer: Answer): Script =>
  (arrival) =>
    arrival.attempt <= times ? answer : OK;

const gapsMs = (server: TestServer, order: number): number[] =>
  server
    .arrivalsOf(order)
    .slice(1)
    .map((arrival, i) => arrival.atMs - server.arrivalsOf(order)[i]!.atMs);

describe('idempotencyClientInterceptor: the key', () => {
  it('sends one key on every attempt of a call, and a new key per call', async () => {
    const { server, client } = await setUp(failFirst(2, { code: status.UNAVAILABLE }));
    const [first, second] = await Promise.all([place(client, 1).outcome, place(client, 2).outcome]);
    for (const [order, outcome] of [
      [1, first],
      [2, second],
    ] as const) {
      expect(outcome.error).toBeUndefined();
      const arrivals = server.arrivalsOf(order);
      expect(arrivals).toHaveLength(3);
      expect(new Set(arrivals.map((a) => a.key)).size).toBe(1);
      expect(arrivals.every((a) => a.metadata.get('idempotency-key').length === 1)).toBe(true);
      expect(arrivals[0]!.key).toMatch(UUID_V7);
      expect(outcome.receipt).toEqual({ order, key: arrivals[0]!.key, attempt: 3 });
    }
    expect(first.receipt!.key).not.toBe(second.receipt!.key);
  });

  it('keeps a key the caller set', async () => {
    const { server, client } = await setUp(failFirst(1, { code: status.ABORTED }));
    const metadata = metadataOf({ 'idempotency-key': 'order-7-from-caller' });
    const { error } = await place(client, 7, { metadata }).outcome;
    expect(error).toBeUndefined();
    expect(server.arrivals.map((a) => a.metadata.get('idempotency-key'))).toEqual([
      ['order-7-from-caller'],
      ['order-7-from-caller'],
    ]);
  });

  it('gives two calls sharing one Metadata object two keys, and leaves that object as it was', async () => {
    const { server, client } = await setUp(() => OK);
    const shared = metadataOf({ tenant: 'acme' });
    await place(client, 1, { metadata: shared }).outcome;
    await place(client, 2, { metadata: shared }).outcome;
    const [one, two] = server.arrivals;
    expect(one!.key).toMatch(UUID_V7);
    expect(two!.key).toMatch(UUID_V7);
    expect(one!.key).not.toBe(two!.key);
    expect(two!.metadata.get('tenant')).toEqual(['acme']);
    expect(shared.toJSON()).toEqual({ tenant: ['acme'] });
  });

  it('uses metadataKey and newKey', async () => {
    const { server, client } = await setUp(() => OK, {
      metadataKey: 'x-request-id',
      newKey: () => 'req-1',
    });
    await place(client, 1).outcome;
    expect(server.arrivals[0]!.metadata.get('x-request-id')).toEqual(['req-1']);
    expect(server.arrivals[0]!.key).toBeUndefined();
  });

  it('works as a per-call interceptor', async () => {
    server = await startTestServer(failFirst(1, { code: status.UNAVAILABLE }));
    const client = testClient(server.address);
    clients.push(client);
    const { error } = await place(client, 1, {
      interceptors: [idempotencyClientInterceptor(fast)],
    }).outcome;
    expect(error).toBeUndefined();
    expect(server.arrivals.map((a) => a.key)).toEqual([
      server.arrivals[0]!.key,
      server.arrivals[0]!.key,
    ]);
    expect(server.arrivals[0]!.key).toMatch(UUID_V7);
  });

  it('leaves a streaming call untouched: no key, no retry', async () => {
    const { server, client } = await setUp(() => ({ code: status.UNAVAILABLE }));
    const stream = watch(client, 5);
    const received: unknown[] = [];
    stream.on('data', (receipt) => received.push(receipt));
    const error = await new Promise<{ code: number }>((resolve) => stream.on('error', resolve));
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(received).toEqual([{ order: 5, attempt: 1 }]);
    expect(server.arrivals).toHaveLength(1);
    expect(server.arrivals[0]!.metadata.get('idempotency-key')).toEqual([]);
  });
});

describe('idempotencyClientInterceptor: retries', () => {
  it('waits the RetryInfo delay between attempts, even past maxDelayMs', async () => {
    const { server, client } = await setUp(failFirst(2, abortedFor(200)), {
      baseDelayMs: 1,
      maxDelayMs: 10,
    });
    const { error, receipt } = await place(client, 1).outcome;
    expect(error).toBeUndefined();
    expect(receipt?.attempt).toBe(3);
    const gaps = gapsMs(server, 1);
    expect(gaps).toHaveLength(2);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(200 - TIMER_SLACK_MS);
  });

  it.each(['trailers', 'headers'] as const)(
    'waits the retry-after-ms delay sent in the %s',
    async (where) => {
      const hint = metadataOf({ 'retry-after-ms': '150' });
      const answer: Answer =
        where === 'trailers'
          ? { code: status.UNAVAILABLE, trailers: hint }
          : { code: status.UNAVAILABLE, headers: hint };
      const { server, client } = await setUp(failFirst(1, answer));
      const { error } = await place(client, 1).outcome;
      expect(error).toBeUndefined();
      expect(gapsMs(server, 1)[0]).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
    },
  );

  it.each([status.ABORTED, status.UNAVAILABLE])('retries status %i by default', async (code) => {
    const { server, client } = await setUp(failFirst(3, { code }));
    const { error, receipt } = await place(client, 1).outcome;
    expect(error).toBeUndefined();
    expect(receipt?.attempt).toBe(4);
    expect(server.arrivals).toHaveLength(4);
  });

  it.each([
    status.INVALID_ARGUMENT,
    status.FAILED_PRECONDITION,
    status.INTERNAL,
    status.RESOURCE_EXHAUSTED,
    status.DEADLINE_EXCEEDED,
  ])('does not retry status %i by default', async (code) => {
    const { server, client } = await setUp(() => ({ code }));
    const { error } = await place(client, 1).outcome;
    expect(error?.code).toBe(code);
    expect(server.arrivals).toHaveLength(1);
  });

  it('retries the statuses retryOn names, and only those', async () => {
    const { server, client } = await setUp(
      (arrival) =>
        arrival.order === 2 || arrival.attempt === 1
          ? { code: arrival.order === 1 ? status.INTERNAL : status.UNAVAILABLE }
          : OK,
      { ...fast, retryOn: [status.INTERNAL] },
    );
    expect((await place(client, 1).outcome).error).toBeUndefined();
    expect(server.arrivalsOf(1)).toHaveLength(2);
    expect((await place(client, 2).outcome).error?.code).toBe(status.UNAVAILABLE);
    expect(server.arrivalsOf(2)).toHaveLength(1);
  });

  it('hands the caller the last attempt’s status, trailers and headers after maxAttempts', async () => {
    const { server, client } = await setUp(
      (arrival) => ({
        code: status.ABORTED,
        details: `busy (attempt ${arrival.attempt})`,
        headers: metadataOf({ attempt: String(arrival.attempt) }),
        trailers: metadataOf({ 'last-attempt': String(arrival.attempt) }),
      }),
      { ...fast, maxAttempts: 3 },
    );
    const { error, headers } = await place(client, 1).outcome;
    expect(server.arrivals).toHaveLength(3);
    expect(error?.code).toBe(status.ABORTED);
    expect(error?.details).toBe('busy (attempt 3)');
    expect(error?.metadata.get('last-attempt')).toEqual(['3']);
    expect(headers.map((h) => h.get('attempt'))).toEqual([['3']]);
  });

  it('ends the call with the last status at once when the deadline comes before the advised delay', async () => {
    const { server, client } = await setUp(() => abortedFor(2_000));
    const { error, elapsedMs } = await place(client, 1, { deadline: Date.now() + 500 }).outcome;
    expect(error?.code).toBe(status.ABORTED);
    expect(server.arrivals).toHaveLength(1);
    expect(elapsedMs).toBeLessThan(400);
  });

  it('retries within the deadline when the advised delay fits', async () => {
    const { server, client } = await setUp(failFirst(1, abortedFor(100)));
    const { error } = await place(client, 1, { deadline: new Date(Date.now() + 3_000) }).outcome;
    expect(error).toBeUndefined();
    expect(server.arrivals).toHaveLength(2);
  });

  it('keeps the key across grpc-js’s own retryPolicy attempts', async () => {
    const serviceConfig = {
      methodConfig: [
        {
          name: [{ service: 'idemq.test.Ledger' }],
          retryPolicy: {
            maxAttempts: 4,
            initialBackoff: '0.01s',
            maxBackoff: '0.05s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['ABORTED'],
          },
        },
      ],
    };
    const { server, client } = await setUp(
      failFirst(2, { code: status.ABORTED }),
      { ...fast, retryOn: [] }, // only grpc-js retries here
      { 'grpc.service_config': JSON.stringify(serviceConfig) },
    );
    const { error } = await place(client, 1).outcome;
    expect(error).toBeUndefined();
    expect(server.arrivals).toHaveLength(3);
    // grpc-js numbers its attempts in this header: the retries were its own.
    expect(server.arrivals.map((a) => a.metadata.get('grpc-previous-rpc-attempts'))).toEqual([
      [],
      ['1'],
      ['2'],
    ]);
    expect(new Set(server.arrivals.map((a) => a.key)).size).toBe(1);
    expect(server.arrivals[0]!.key).toMatch(UUID_V7);
  });
});

describe('idempotencyClientInterceptor: ending a call early', () => {
  it('stops retrying at once when the call is cancelled during a wait', async () => {
    const { server, client } = await setUp(() => abortedFor(300));
    const { call, outcome } = place(client, 1);
    await server.waitForArrivals(1);
    call.cancel();
    const { error, elapsedMs } = await outcome;
    expect(error?.code).toBe(status.CANCELLED);
    expect(elapsedMs).toBeLessThan(250);
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the advised delay
    expect(server.arrivals).toHaveLength(1);
  });

  it('cancels the attempt in flight, not the first one', async () => {
    const { server, client } = await setUp((arrival) =>
      arrival.attempt === 1 ? abortedFor(10) : { hang: true },
    );
    const { call, outcome } = place(client, 1);
    await server.waitForArrivals(2);
    call.cancel();
    const { error } = await outcome;
    expect(error?.code).toBe(status.CANCELLED);
    await expect.poll(() => server.cancelled.map((a) => a.attempt)).toEqual([2]);
    expect(server.arrivals).toHaveLength(2);
  }, 5_000);

  it('hands back the last status when the channel is closed during a wait', async () => {
    const { server, client } = await setUp(() => abortedFor(200));
    const { outcome } = place(client, 1);
    await server.waitForArrivals(1);
    client.close();
    const { error } = await outcome;
    expect(error?.code).toBe(status.ABORTED);
    expect(server.arrivals).toHaveLength(1);
  }, 5_000);
});

describe('idempotencyClientInterceptor against a server that fails at random', () => {
  const ORDERS = 50;

  /**
   * An idempotent ledger: it runs an order once per key and replays that receipt to the key's
   * retries. At random it answers UNAVAILABLE or ABORTED before running, or runs and then
   * loses the reply (UNAVAILABLE): only a retry with the same key is safe then.
   */
  function flakyLedger(seed: number) {
    let state = seed;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const receipts = new Map<string, number>();
    const runs = new Map<number, number>();
    const script: Script = (arrival) => {
      const roll = random();
      if (roll < 0.15) return { code: status.UNAVAILABLE };
      if (roll < 0.25) return abortedFor(5);
      const key = arrival.key ?? `no-key-${arrival.order}-${arrival.attempt}`;
      if (!receipts.has(key)) {
        receipts.set(key, arrival.order);
        runs.set(arrival.order, (runs.get(arrival.order) ?? 0) + 1);
      }
      return roll < 0.35 ? { code: status.UNAVAILABLE, details: 'reply lost' } : OK;
    };
    return { script, receipts, runs };
  }

  it('ends each of 50 calls OK with each order run exactly once', async () => {
    const ledger = flakyLedger(2026);
    const { server, client } = await setUp(ledger.script, { ...fast, maxAttempts: 20 });
    const outcomes = await Promise.all(
      Array.from({ length: ORDERS }, (_, order) => place(client, order).outcome),
    );

    for (const [order, outcome] of outcomes.entries()) {
      expect(outcome.error, `order ${order}`).toBeUndefined();
      expect(ledger.runs.get(order), `order ${order}`).toBe(1);
    }
    expect(ledger.receipts.size).toBe(ORDERS);
    // The faults happened: calls needed more than one attempt.
    expect(server.arrivals.length).toBeGreaterThan(ORDERS * 1.2);
    const keys = Array.from({ length: ORDERS }, (_, order) => {
      const keysOfOrder = new Set(server.arrivalsOf(order).map((a) => a.key));
      expect(keysOfOrder.size, `order ${order}`).toBe(1);
      return [...keysOfOrder][0];
    });
    expect(new Set(keys).size).toBe(ORDERS);
  });

  it('checker: a new key on each attempt gets orders run twice', async () => {
    // Deliberately broken: below the interceptor, every attempt gets a fresh key.
    const rekey: Interceptor = (options, nextCall) =>
      new InterceptingCall(nextCall(options), {
        start: (metadata, listener, next) => {
          const sent = metadata.clone();
          sent.set('idempotency-key', uuidv7());
          next(sent, listener);
        },
      });
    const ledger = flakyLedger(2026);
    server = await startTestServer(ledger.script);
    const client = testClient(server.address, {
      interceptors: [idempotencyClientInterceptor({ ...fast, maxAttempts: 20 }), rekey],
    });
    clients.push(client);
    await Promise.all(Array.from({ length: ORDERS }, (_, order) => place(client, order).outcome));
    expect([...ledger.runs.values()].some((count) => count > 1)).toBe(true);
  });
});
