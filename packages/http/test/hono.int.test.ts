import type { Store } from '@idemq/core';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { type IdempotencyEnv, idempotency } from '../src/hono/index.js';
import { problemTypeUri } from '../src/index.js';
import { type FetchServer, serveFetch } from './fetchServer.js';
import { bytesOf, gate, post, STORES } from './helpers.js';

const servers: FetchServer[] = [];
const stores: Store[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function serveApp(app: Hono<IdempotencyEnv>): Promise<string> {
  const server = await serveFetch(async (request) => app.fetch(request));
  servers.push(server);
  return server.url;
}

describe.each(STORES)('@idemq/http/hono idempotency() ($name store)', ({ make }) => {
  const store = (): Store => {
    const made = make();
    stores.push(made);
    return made;
  };

  it('runs the route once and replays its status, headers and bytes; the route reads the body', async () => {
    let runs = 0;
    const app = new Hono<IdempotencyEnv>();
    app.use(idempotency({ store: store() }));
    app.post('/orders/:id', async (c) => {
      runs += 1;
      const { amount } = await c.req.json<{ amount: number }>();
      c.header('set-cookie', 'session=1');
      return c.json(
        { id: c.req.param('id'), amount, key: c.get('idempotency').idempotencyKey },
        201,
        {
          location: `/orders/${c.req.param('id')}`,
        },
      );
    });
    const base = await serveApp(app);
    const first = await post(`${base}/orders/7`, '"k-1"');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.get('set-cookie')).toBe('session=1');
    const firstBytes = await bytesOf(first);
    expect(JSON.parse(new TextDecoder().decode(firstBytes))).toEqual({
      id: '7',
      amount: 10,
      key: 'k-1',
    });

    const replay = await post(`${base}/orders/7`, '"k-1"');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe('/orders/7');
    expect(replay.headers.get('set-cookie')).toBeNull();
    expect(await bytesOf(replay)).toEqual(firstBytes);
    expect(runs).toBe(1);
  });

  it('scopes keys by the matched route pattern: one key on /orders/1 then /orders/2 is key reuse, never order 1 replayed', async () => {
    const app = new Hono<IdempotencyEnv>();
    app.use(idempotency({ store: store() }));
    app.post('/orders/:id', (c) => c.text(`order ${c.req.param('id')}`));
    app.post('/refunds/:id', (c) => c.text(`refund ${c.req.param('id')}`));
    const base = await serveApp(app);
    expect(await (await post(`${base}/orders/1`, 'same')).text()).toBe('order 1');
    // Same pattern, same key, another target: another request under one key.
    const again = await post(`${base}/orders/2`, 'same');
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const replay = await post(`${base}/orders/1`, 'same');
    expect(await replay.text()).toBe('order 1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // Another pattern is another scope.
    expect(await (await post(`${base}/refunds/1`, 'same')).text()).toBe('refund 1');
  });

  it('answers 409 + Retry-After while running, 422 on another body, 400 without a key', async () => {
    const held = gate();
    const app = new Hono<IdempotencyEnv>();
    app.post('/pay', idempotency({ store: store(), leaseMs: 4_000 }), async (c) => {
      await held.opened;
      return c.text('paid', 201);
    });
    const base = await serveApp(app);
    const first = post(`${base}/pay`, 'p-1');
    let conflict = await post(`${base}/pay`, 'p-1');
    while (conflict.status !== 409) conflict = await post(`${base}/pay`, 'p-1');
    expect(conflict.headers.get('retry-after')).toBe('4');
    expect(await conflict.json()).toMatchObject({ type: problemTypeUri('in-progress') });
    held.open();
    expect((await first).status).toBe(201);
    expect((await post(`${base}/pay`, 'p-1', '{"amount":11}')).status).toBe(422);
    const missing = await post(`${base}/pay`, undefined);
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
  });

  it('lets GET through and records a thrown error as a failure the retry runs again', async () => {
    let attempts = 0;
    const app = new Hono<IdempotencyEnv>();
    app.use(idempotency({ store: store() }));
    app.get('/orders', (c) => c.text('list'));
    app.post('/orders', (c) => {
      attempts += 1;
      if (attempts === 1) throw new Error('boom');
      return c.text(`attempt ${c.get('idempotency').attempt}`, 201);
    });
    const base = await serveApp(app);
    const listed = await fetch(`${base}/orders`);
    expect(await listed.text()).toBe('list');
    expect((await post(`${base}/orders`, 'retry-1')).status).toBe(500);
    const retried = await post(`${base}/orders`, 'retry-1');
    expect(retried.status).toBe(201);
    expect(await retried.text()).toBe('attempt 2');
  });
});
