import type { Store } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { freePort } from '@idemq/services';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHttpIdempotency,
  type HttpContext,
  type HttpIdempotencyOptions,
  problemTypeUri,
} from '../src/index.js';
import { type FetchServer, serveFetch } from './fetchServer.js';
import { bytesOf, gate, post, STORES } from './helpers.js';

type Route = (request: Request, ctx: HttpContext) => Promise<Response>;

const servers: FetchServer[] = [];
const stores: Store[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function serve(
  store: Store,
  route: Route,
  options: Partial<HttpIdempotencyOptions> = {},
): Promise<string> {
  const idempotency = createHttpIdempotency({ store, ...options });
  const server = await serveFetch((request) => idempotency.handle(request, route));
  servers.push(server);
  return `${server.url}/orders`;
}

describe.each(STORES)('createHttpIdempotency over real HTTP ($name store)', ({ make }) => {
  const store = (): Store => {
    const made = make();
    stores.push(made);
    return made;
  };

  it('replays the first response byte for byte, marked Idempotent-Replayed only on replays', async () => {
    const body = new Uint8Array(256).map((_, i) => i);
    let runs = 0;
    const url = await serve(store(), async () => {
      runs += 1;
      return new Response(body, {
        status: 201,
        headers: {
          'content-type': 'application/octet-stream',
          location: '/orders/1',
          'set-cookie': 'session=secret',
          'x-internal': 'not replayed',
        },
      });
    });
    const first = await post(url, '"order-1"');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.get('set-cookie')).toBe('session=secret');
    expect(await bytesOf(first)).toEqual(body);

    for (const key of ['"order-1"', 'order-1']) {
      const replay = await post(url, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.headers.get('content-type')).toBe('application/octet-stream');
      expect(replay.headers.get('location')).toBe('/orders/1');
      expect(replay.headers.get('set-cookie')).toBeNull();
      expect(replay.headers.get('x-internal')).toBeNull();
      expect(await bytesOf(replay)).toEqual(body);
    }
    expect(runs).toBe(1);
  });

  it('answers 409 with a Retry-After taken from the lease while the first request runs', async () => {
    for (const leaseMs of [3_000, 7_000]) {
      const held = gate();
      const url = await serve(
        store(),
        async () => {
          await held.opened;
          return Response.json({ ok: true }, { status: 201 });
        },
        { leaseMs, inProgressRetryMaxDelayMs: 10_000 },
      );
      const first = post(url, 'slow-1');
      let conflict = await post(url, 'slow-1');
      while (conflict.status !== 409) conflict = await post(url, 'slow-1');
      expect(conflict.headers.get('retry-after')).toBe(String(leaseMs / 1000));
      expect(conflict.headers.get('content-type')).toBe('application/problem+json');
      expect(await conflict.json()).toMatchObject({
        type: problemTypeUri('in-progress'),
        status: 409,
      });
      held.open();
      expect((await first).status).toBe(201);
      expect((await post(url, 'slow-1')).headers.get('idempotent-replayed')).toBe('true');
    }
  });

  it('answers 422 when the key comes back with another body', async () => {
    const url = await serve(store(), async () => Response.json({ ok: true }));
    expect((await post(url, 'k-422', '{"amount":10}')).status).toBe(200);
    const reused = await post(url, 'k-422', '{"amount":99}');
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ type: problemTypeUri('key-reuse'), status: 422 });
  });

  it('answers 400 for a missing or malformed key, and runs nothing', async () => {
    let runs = 0;
    const url = await serve(store(), async () => {
      runs += 1;
      return new Response('ran');
    });
    const missing = await post(url, undefined);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ type: problemTypeUri('key-missing') });
    for (const key of ['""', 'k'.repeat(256), 'a\tb', '"unclosed', '"a"b', '"a\\nb"']) {
      const malformed = await post(url, key);
      expect(malformed.status, key).toBe(400);
      expect(await malformed.json()).toMatchObject({
        type: problemTypeUri('key-malformed'),
        status: 400,
      });
    }
    expect((await post(url, 'k'.repeat(255))).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('lets uncovered methods through untouched, and keyless requests when the key is optional', async () => {
    let seen: HttpContext | undefined;
    const route: Route = async (_request, ctx) => {
      seen = ctx;
      return new Response('listed');
    };
    const url = await serve(store(), route);
    const listed = await fetch(url);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('idempotent-replayed')).toBeNull();
    expect(seen?.idempotencyKey).toBeUndefined();
    const put = await fetch(url, { method: 'PUT', body: 'x' });
    expect(put.status).toBe(200);

    const optional = await serve(store(), route, { required: false });
    expect((await post(optional, undefined)).status).toBe(200);
    expect(seen?.idempotencyKey).toBeUndefined();
  });

  it('runs the route once for 100 concurrent requests with one key; the others get 409 or the replay', async () => {
    let runs = 0;
    const url = await serve(store(), async (request) => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return new Response(await request.text(), { status: 201 });
    });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => post(url, 'storm-1', '{"n":1}')),
    );
    expect(runs).toBe(1);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).not.toHaveLength(0);
    for (const answer of answers) {
      expect([201, 409]).toContain(answer.status);
      if (answer.status === 201) expect(await answer.text()).toBe('{"n":1}');
    }
    const fresh = answers.filter(
      (a) => a.status === 201 && a.headers.get('idempotent-replayed') === null,
    );
    expect(fresh).toHaveLength(1);
  });

  it('leaves a 5xx or a throw unstored: the retry runs again and its answer is kept', async () => {
    const attempts: number[] = [];
    const url = await serve(store(), async (_request, ctx) => {
      attempts.push(ctx.attempt ?? 0);
      if (attempts.length === 1) return new Response('busy', { status: 503 });
      if (attempts.length === 2) throw new Error('database went away');
      return new Response('done', { status: 201 });
    });
    const unavailable = await post(url, 'flaky-1');
    expect(unavailable.status).toBe(503);
    expect(await unavailable.text()).toBe('busy');
    const failed = await post(url, 'flaky-1');
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ type: problemTypeUri('handler-failed') });
    expect((await post(url, 'flaky-1')).status).toBe(201);
    const replay = await post(url, 'flaky-1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe('done');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('stores the statuses storeStatus chooses, a 5xx included', async () => {
    let runs = 0;
    const url = await serve(
      store(),
      async () => {
        runs += 1;
        return new Response('declined', { status: 502 });
      },
      { storeStatus: () => true },
    );
    expect((await post(url, 'stripe-like')).status).toBe(502);
    const replay = await post(url, 'stripe-like');
    expect(replay.status).toBe(502);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(runs).toBe(1);
  });

  it('never replays one tenant’s response to another', async () => {
    const url = await serve(
      store(),
      async (request) => new Response(`order for ${request.headers.get('x-tenant')}`),
      { principal: (request) => request.headers.get('x-tenant') ?? undefined },
    );
    const a = await post(url, 'shared-key', '{}', { 'x-tenant': 'acme' });
    const b = await post(url, 'shared-key', '{}', { 'x-tenant': 'globex' });
    expect(await a.text()).toBe('order for acme');
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await b.text()).toBe('order for globex');
    const replayB = await post(url, 'shared-key', '{}', { 'x-tenant': 'globex' });
    expect(replayB.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayB.text()).toBe('order for globex');
  });

  it('replays the headers the allow-list adds, never set-cookie unless listed', async () => {
    const url = await serve(
      store(),
      async () => {
        const headers = new Headers({ 'x-order-cost': '3', etag: '"v1"' });
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        return new Response('ok', { headers });
      },
      { replayHeaders: ['X-Order-Cost'] },
    );
    await post(url, 'allow-1');
    const replay = await post(url, 'allow-1');
    expect(replay.headers.get('x-order-cost')).toBe('3');
    expect(replay.headers.get('etag')).toBe('"v1"');
    expect(replay.headers.getSetCookie()).toEqual([]);

    const withCookies = await serve(
      store(),
      async () => {
        const headers = new Headers();
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        return new Response('ok', { headers });
      },
      { replayHeaders: ['set-cookie'] },
    );
    await post(withCookies, 'allow-2');
    expect((await post(withCookies, 'allow-2')).headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  });

  it('sends a response over maxResponseBytes whole, and replays its status and headers without body', async () => {
    const large = new Uint8Array(5_000).fill(7);
    let runs = 0;
    const url = await serve(
      store(),
      async () => {
        runs += 1;
        return new Response(large, { status: 201, headers: { 'content-type': 'image/png' } });
      },
      { maxResponseBytes: 1_024 },
    );
    const first = await post(url, 'large-1');
    expect(await bytesOf(first)).toEqual(large);
    expect(first.headers.get('idempotent-body-omitted')).toBeNull();
    const replay = await post(url, 'large-1');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('content-type')).toBe('image/png');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('idempotent-body-omitted')).toBe('too-large');
    expect((await bytesOf(replay)).byteLength).toBe(0);
    expect(runs).toBe(1);
  });

  it('streams a long response through; the record is completed before the client sees it', async () => {
    const tail = gate();
    const chunk = new Uint8Array(800).fill(1);
    const url = await serve(
      store(),
      async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            async start(controller) {
              controller.enqueue(chunk);
              controller.enqueue(chunk);
              await tail.opened;
              controller.enqueue(chunk);
              controller.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
      { maxResponseBytes: 1_000 },
    );
    const first = await post(url, 'stream-1');
    // Headers are out while the tail is held: a retry now already gets the replay, not 409.
    const retry = await post(url, 'stream-1');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('idempotent-body-omitted')).toBe('too-large');
    tail.open();
    expect((await bytesOf(first)).byteLength).toBe(2_400);
  });
});

describe('a store that is down', () => {
  async function downStore(): Promise<Store> {
    const store = redisStore({
      url: `redis://127.0.0.1:${await freePort()}`,
      commandTimeoutMs: 300,
    });
    stores.push(store);
    return store;
  }

  it('answers 503 with Retry-After and runs nothing (fail closed)', async () => {
    let runs = 0;
    const url = await serve(await downStore(), async () => {
      runs += 1;
      return new Response('ran');
    });
    const answer = await post(url, 'down-1');
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(await answer.json()).toMatchObject({
      type: problemTypeUri('store-unavailable'),
      status: 503,
    });
    expect(runs).toBe(0);
  });

  it("runs the route unclaimed with onStoreError 'process'", async () => {
    const seen: HttpContext[] = [];
    const url = await serve(
      await downStore(),
      async (_request, ctx) => {
        seen.push(ctx);
        return new Response('ran anyway', { status: 201 });
      },
      { onStoreError: 'process' },
    );
    const answer = await post(url, 'down-2');
    expect(answer.status).toBe(201);
    expect(await answer.text()).toBe('ran anyway');
    expect(seen).toMatchObject([{ idempotencyKey: 'down-2', fencingToken: 0 }]);
  });
});
