import { uuidv7 } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  HttpRetriesExhaustedError,
  type IdempotentFetchOptions,
  idempotentFetch,
  type RetryEvent,
} from '../src/client/index.js';
import { type LedgerServer, startLedgerServer } from './clientLedgerServer.js';

const fast: IdempotentFetchOptions = { baseDelayMs: 5, maxDelayMs: 50 };
const ORDERS = 200;
const CHAOS = {
  unavailable: 0.08,
  conflict: 0.06,
  dropBefore: 0.08,
  dropAfter: 0.08,
  dropWhileRunning: 0.04,
};

let server: LedgerServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(chaos: Partial<typeof CHAOS> = {}, seed = 26): Promise<LedgerServer> {
  server = await startLedgerServer({ seed, chaos });
  return server;
}

const postJson = (value: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

describe('idempotentFetch against a server that drops connections and answers 409/503 at random', () => {
  it('executes each of 200 logical requests exactly once and resolves each with its first response', async () => {
    const ledger = await start(CHAOS);
    const retries: RetryEvent[] = [];
    const send = idempotentFetch({ ...fast, maxAttempts: 15, onRetry: (e) => retries.push(e) });

    const answers = await Promise.all(
      Array.from({ length: ORDERS }, async (_, order) => {
        const response = await send(`${ledger.url}/orders`, postJson({ order }));
        return { order, status: response.status, body: await response.text() };
      }),
    );

    expect(ledger.ranMoreThanOnce()).toEqual([]);
    expect(ledger.executions.size).toBe(ORDERS);
    for (const { order, status, body } of answers) {
      expect(status, `order ${order}`).toBe(201);
      const { key } = JSON.parse(body) as { key: string };
      expect(body, `order ${order} got the stored first response`).toBe(ledger.storedBody(key));
    }
    // The chaos really happened: every kind of failure was met and retried.
    expect(retries.some((e) => e.status === 503)).toBe(true);
    expect(retries.some((e) => e.status === 409)).toBe(true);
    expect(retries.some((e) => e.error !== undefined)).toBe(true);

    // One key per logical request, the same on all its attempts; a fresh key per request.
    const keysByOrder = new Map<number, Set<string | null>>();
    for (const arrival of ledger.arrivals) {
      const { order } = JSON.parse(new TextDecoder().decode(arrival.body)) as { order: number };
      keysByOrder.set(order, (keysByOrder.get(order) ?? new Set()).add(arrival.key));
    }
    expect(ledger.arrivals.length).toBeGreaterThan(ORDERS);
    for (const [order, keys] of keysByOrder) expect(keys.size, `order ${order}`).toBe(1);
    const keys = [...keysByOrder.values()].map((set) => [...set][0]);
    expect(new Set(keys).size).toBe(ORDERS);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
  });

  it('checker: a client that makes a new key on each retry gets orders charged twice', async () => {
    const ledger = await start(CHAOS);
    // Deliberately broken: retries like idempotentFetch but with a fresh key per attempt.
    const naive = async (order: number): Promise<void> => {
      for (let attempt = 1; attempt <= 15; attempt += 1) {
        const init = postJson({ order });
        const response = await fetch(`${ledger.url}/orders`, {
          ...init,
          headers: { 'content-type': 'application/json', 'idempotency-key': uuidv7() },
        }).catch(() => undefined);
        if (response !== undefined && response.status < 400) return;
        await response?.body?.cancel();
      }
    };
    await Promise.all(Array.from({ length: ORDERS }, (_, order) => naive(order)));
    expect(ledger.ranMoreThanOnce().length).toBeGreaterThan(0);
  });
});

describe('idempotentFetch retry policy', () => {
  it.each([400, 401, 403, 404, 422])('does not retry a %i', async (code) => {
    const ledger = await start();
    const response = await idempotentFetch(fast)(`${ledger.url}/status?code=${code}`, {
      method: 'POST',
    });
    expect(response.status).toBe(code);
    expect(await response.text()).toBe('no');
    expect(ledger.arrivals.length).toBe(1);
  });

  it.each([409, 429, 500, 502, 503])('retries a %i with the same key', async (code) => {
    const ledger = await start();
    const response = await idempotentFetch(fast)(`${ledger.url}/status?code=${code}&times=2`, {
      method: 'POST',
      body: 'x',
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('ok after 3');
    expect(ledger.arrivals.length).toBe(3);
    expect(new Set(ledger.arrivals.map((a) => a.key)).size).toBe(1);
  });

  it('waits at least Retry-After (seconds) before the next attempt', async () => {
    const ledger = await start();
    await idempotentFetch(fast)(`${ledger.url}/status?code=503&times=1&retryAfter=1`, {
      method: 'POST',
    });
    const [first, second] = ledger.arrivals;
    expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(1000);
  });

  it('waits until a Retry-After HTTP-date', async () => {
    const ledger = await start();
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000);
    const startedAt = Date.now();
    await idempotentFetch(fast)(
      `${ledger.url}/status?code=503&times=1&retryAfter=${encodeURIComponent(at.toUTCString())}`,
      { method: 'POST' },
    );
    expect(ledger.arrivals.length).toBe(2);
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime());
    expect(Date.now() - startedAt).toBeLessThan(4000);
  });

  it('caps Retry-After at maxRetryAfterMs', async () => {
    const ledger = await start();
    const startedAt = performance.now();
    const response = await idempotentFetch({ ...fast, maxRetryAfterMs: 100 })(
      `${ledger.url}/status?code=503&times=1&retryAfter=30`,
      { method: 'POST' },
    );
    expect(response.status).toBe(201);
    expect(performance.now() - startedAt).toBeLessThan(1000);
  });

  it('resolves with the last response when the attempts run out', async () => {
    const ledger = await start();
    const response = await idempotentFetch({ ...fast, maxAttempts: 3 })(
      `${ledger.url}/status?code=503`,
      { method: 'POST' },
    );
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('no');
    expect(ledger.arrivals.length).toBe(3);
  });

  it('rejects with HttpRetriesExhaustedError when the last attempt got no response', async () => {
    const ledger = await start();
    const failure = idempotentFetch({ ...fast, maxAttempts: 3 })(`${ledger.url}/drop`, {
      method: 'POST',
    });
    await expect(failure).rejects.toBeInstanceOf(HttpRetriesExhaustedError);
    const error = (await failure.catch((e: unknown) => e)) as HttpRetriesExhaustedError;
    expect(error.code).toBe('IDEMQ_ERR_HTTP_RETRIES_EXHAUSTED');
    expect(error.reason).toBe('attempts');
    expect(error.attempts).toBe(3);
    expect(error.idempotencyKey).toBe(ledger.arrivals[0]!.key);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(ledger.arrivals.length).toBe(3);
  });

  it('retries an attempt that outlives attemptTimeoutMs, with the same key', async () => {
    const ledger = await start();
    const response = await idempotentFetch({ ...fast, attemptTimeoutMs: 200 })(
      `${ledger.url}/hang?times=1`,
      { method: 'POST' },
    );
    expect(response.status).toBe(201);
    expect(ledger.arrivals.length).toBe(2);
    expect(ledger.arrivals[0]!.key).toBe(ledger.arrivals[1]!.key);
  });

  it('stops at deadlineMs: the last response, or the error when an attempt is cut', async () => {
    const ledger = await start();
    let startedAt = performance.now();
    const response = await idempotentFetch({ baseDelayMs: 100, maxDelayMs: 100, deadlineMs: 400 })(
      `${ledger.url}/status?code=503&retryAfter=1`,
      { method: 'POST' },
    );
    expect(response.status).toBe(503);
    expect(ledger.arrivals.length).toBe(1); // the Retry-After wait would pass the deadline
    expect(performance.now() - startedAt).toBeLessThan(400);

    startedAt = performance.now();
    const cut = idempotentFetch({ deadlineMs: 300 })(`${ledger.url}/hang`, { method: 'POST' });
    await expect(cut).rejects.toMatchObject({
      code: 'IDEMQ_ERR_HTTP_RETRIES_EXHAUSTED',
      reason: 'deadline',
    });
    expect(performance.now() - startedAt).toBeLessThan(1000);
  });

  it("stops at once when the caller aborts, waiting or in flight, with the caller's reason", async () => {
    const ledger = await start();
    const send = idempotentFetch(fast);
    const reason = new Error('user left');

    const waiting = new AbortController();
    let startedAt = performance.now();
    const waited = send(`${ledger.url}/status?code=503&retryAfter=10`, {
      method: 'POST',
      signal: waiting.signal,
    });
    setTimeout(() => waiting.abort(reason), 200);
    await expect(waited).rejects.toBe(reason);
    expect(performance.now() - startedAt).toBeLessThan(1000);
    expect(ledger.arrivals.length).toBe(1);

    const inFlight = new AbortController();
    startedAt = performance.now();
    const hung = send(`${ledger.url}/hang`, { method: 'POST', signal: inFlight.signal });
    setTimeout(() => inFlight.abort(reason), 200);
    await expect(hung).rejects.toBe(reason);
    expect(performance.now() - startedAt).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ledger.arrivals.filter((a) => a.path === '/hang').length).toBe(1);
  });

  it('passes other methods through: no key, no retry', async () => {
    const ledger = await start();
    const response = await idempotentFetch(fast)(`${ledger.url}/status?code=503`);
    expect(response.status).toBe(503);
    expect(ledger.arrivals).toHaveLength(1);
    expect(ledger.arrivals[0]!.key).toBeNull();
    await idempotentFetch({ ...fast, methods: ['PUT'] })(`${ledger.url}/status?code=404`, {
      method: 'put',
    });
    expect(ledger.arrivals[1]!.key).not.toBeNull();
  });
});

describe('idempotentFetch keys and bodies', () => {
  it('keeps the key the request already carries, and quotes a generated one as asked', async () => {
    const ledger = await start();
    await idempotentFetch(fast)(`${ledger.url}/status?code=503&times=1`, {
      method: 'POST',
      headers: { 'Idempotency-Key': 'order-42' },
    });
    expect(ledger.arrivals.map((a) => a.key)).toEqual(['order-42', 'order-42']);

    await idempotentFetch({ ...fast, keyFormat: 'sf-string', headerName: 'X-Request-Key' })(
      `${ledger.url}/echo`,
      { method: 'POST', body: 'b' },
    );
    const quoted = ledger.arrivals.slice(2).map((a) => a.headers['x-request-key']);
    expect(quoted).toHaveLength(2);
    expect(quoted[0]).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(quoted[1]).toBe(quoted[0]);
    expect(ledger.arrivals[2]!.key).toBeNull();
  });

  const bodies: Array<[string, () => RequestInit['body']]> = [
    ['string', () => 'héllo wörld'],
    ['Uint8Array', () => new Uint8Array([0, 1, 2, 254, 255])],
    ['ArrayBuffer', () => new Uint8Array([9, 8, 7]).buffer],
    ['Blob', () => new Blob(['blob ', 'parts'], { type: 'text/plain' })],
    ['URLSearchParams', () => new URLSearchParams({ a: '1', b: 'x y' })],
    [
      'FormData',
      () => {
        const form = new FormData();
        form.set('name', 'value');
        form.set('file', new Blob([new Uint8Array([1, 2, 3])]), 'f.bin');
        return form;
      },
    ],
    [
      'ReadableStream',
      () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('streamed '));
            controller.enqueue(new TextEncoder().encode('body'));
            controller.close();
          },
        }),
    ],
  ];
  it.each(bodies)('sends the same %s body bytes on every attempt', async (_, makeBody) => {
    const ledger = await start();
    const response = await idempotentFetch(fast)(`${ledger.url}/echo`, {
      method: 'POST',
      body: makeBody(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    const [first, second] = ledger.arrivals;
    expect(ledger.arrivals).toHaveLength(2);
    expect(first!.body.byteLength).toBeGreaterThan(0);
    expect(second!.body).toEqual(first!.body);
    expect(second!.contentType).toBe(first!.contentType);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(first!.body);
  });
});
