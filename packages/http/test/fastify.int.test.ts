import { Readable } from 'node:stream';
import { memoryStore, type Store } from '@idemq/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type FastifyIdempotencyOptions, idempotencyPlugin } from '../src/fastify/index.js';
import { defaultFingerprint } from '../src/index.js';
import { gate } from './helpers.js';

const apps: FastifyInstance[] = [];
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function serve(app: FastifyInstance): Promise<string> {
  apps.push(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}

function post(
  url: string,
  key: string,
  body?: RequestInit['body'],
  headers: Record<string, string> = {},
) {
  return fetch(url, { method: 'POST', headers: { 'idempotency-key': key, ...headers }, body });
}

const BINARY = Uint8Array.from({ length: 256 }, (_, index) => 255 - index);

/** Registers the plugin on a fresh memory store; `bodies` collects what each fingerprint covered. */
async function register(
  app: FastifyInstance,
  options: Omit<FastifyIdempotencyOptions, 'store'> = {},
): Promise<{ bodies: Uint8Array[] }> {
  const store = memoryStore();
  stores.push(store);
  const bodies: Uint8Array[] = [];
  await app.register(idempotencyPlugin, {
    store,
    fingerprint: (request, body) => {
      bodies.push(body);
      return defaultFingerprint(request.method, request.url, body);
    },
    ...options,
  });
  return { bodies };
}

describe('Fastify binding', () => {
  it('runs the route with request.idempotency, and replays the first answer', async () => {
    const app = Fastify();
    await register(app);
    let runs = 0;
    app.post('/pay', async (request) => {
      runs++;
      return { key: request.idempotency?.idempotencyKey, attempt: request.idempotency?.attempt };
    });
    const base = await serve(app);
    const first = await post(`${base}/pay`, 'k-1', '{}', { 'content-type': 'application/json' });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ key: 'k-1', attempt: 1 });
    const replay = await post(`${base}/pay`, 'k-1', '{}', { 'content-type': 'application/json' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual({ key: 'k-1', attempt: 1 });
    expect(runs).toBe(1);
  });

  it('replays the first response byte for byte: status, binary body, every allowed set-cookie', async () => {
    let runs = 0;
    const app = Fastify();
    await register(app, { replayHeaders: ['set-cookie', 'x-run'] });
    app.post('/files', async (_request, reply) => {
      runs++;
      reply.header('set-cookie', ['a=1; Path=/; HttpOnly', 'b=2; Path=/']);
      reply.header('x-run', String(runs)).type('application/octet-stream').code(201);
      return Buffer.from(BINARY);
    });
    const base = await serve(app);
    const first = await post(`${base}/files`, 'bin');
    const firstBody = new Uint8Array(await first.arrayBuffer());
    const second = await post(`${base}/files`, 'bin');
    const secondBody = new Uint8Array(await second.arrayBuffer());

    expect(runs).toBe(1);
    expect(first.status).toBe(201);
    expect(firstBody).toEqual(BINARY);
    expect(first.headers.getSetCookie()).toEqual(['a=1; Path=/; HttpOnly', 'b=2; Path=/']);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(secondBody).toEqual(BINARY);
    expect(second.headers.getSetCookie()).toEqual(first.headers.getSetCookie());
    expect(second.headers.get('x-run')).toBe('1');
    expect(second.headers.get('content-type')).toBe('application/octet-stream');
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('the fingerprint covers the body bytes as sent; the route gets the parsed body', async () => {
    const app = Fastify();
    const { bodies } = await register(app);
    app.post('/orders', async (request, reply) => reply.code(201).send({ received: request.body }));
    app.post('/upload', async (request) => ({ length: (request.body as Buffer).length }));
    app.addContentTypeParser(
      'application/octet-stream',
      { parseAs: 'buffer' },
      (_request, body, done) => {
        done(null, body);
      },
    );
    const base = await serve(app);
    const text = '{ "amount": 10,  "currency": "EUR" }';
    const json = await post(`${base}/orders`, 'j-1', text, { 'content-type': 'application/json' });
    expect(await json.json()).toEqual({ received: { amount: 10, currency: 'EUR' } });
    expect(new TextDecoder().decode(bodies[0])).toBe(text);
    const binary = await post(`${base}/upload`, 'b-1', BINARY, {
      'content-type': 'application/octet-stream',
    });
    expect(await binary.json()).toEqual({ length: BINARY.length });
    expect(new Uint8Array(bodies[1] ?? [])).toEqual(BINARY);
  });

  it('leaves a request it passes through untouched', async () => {
    const app = Fastify();
    const { bodies } = await register(app);
    app.put('/docs/:id', async (request) => ({ body: request.body }));
    app.get('/docs/:id', async (_request, reply) => reply.header('etag', '"v1"').send({ id: 1 }));
    const base = await serve(app);
    const put = await fetch(`${base}/docs/1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'ignored' },
      body: '{"title":"x"}',
    });
    expect(await put.json()).toEqual({ body: { title: 'x' } });
    expect(put.headers.get('idempotent-replayed')).toBeNull();
    const get = await fetch(`${base}/docs/1`);
    expect(get.headers.get('etag')).toBe('"v1"');
    expect(await get.json()).toEqual({ id: 1 });
    expect(bodies).toEqual([]);
  });

  it('a route error is the 5xx Fastify renders, not stored: a retry runs the route again', async () => {
    let runs = 0;
    const app = Fastify();
    await register(app);
    app.post('/fails', async () => {
      runs++;
      throw new Error('boom');
    });
    const base = await serve(app);
    const first = await post(`${base}/fails`, 'e-1');
    const retry = await post(`${base}/fails`, 'e-1');
    expect([first.status, retry.status]).toEqual([500, 500]);
    expect(await first.json()).toMatchObject({ message: 'boom' });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(runs).toBe(2);
  });

  it('captures a streamed reply, and replays it whole', async () => {
    const app = Fastify();
    await register(app);
    app.post('/stream', async (_request, reply) => {
      async function* parts() {
        for (const part of ['one,', 'two,', 'three']) {
          yield Buffer.from(part);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      return reply.code(202).type('text/plain').send(Readable.from(parts()));
    });
    const base = await serve(app);
    const first = await post(`${base}/stream`, 's-1');
    const second = await post(`${base}/stream`, 's-1');
    expect(first.status).toBe(202);
    expect(await first.text()).toBe('one,two,three');
    expect(second.status).toBe(202);
    expect(await second.text()).toBe('one,two,three');
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('streams a reply past the stored limit whole to its client, and replays it body-omitted', async () => {
    const app = Fastify();
    await register(app, { maxResponseBytes: 1000 });
    const chunk = Buffer.alloc(700, 0x61);
    app.post('/big', async (_request, reply) =>
      reply.type('text/plain').send(Readable.from([chunk, chunk, chunk])),
    );
    const base = await serve(app);
    const first = await post(`${base}/big`, 'big-1');
    expect((await first.text()).length).toBe(2100);
    const replay = await post(`${base}/big`, 'big-1');
    expect(replay.headers.get('idempotent-body-omitted')).toBe('too-large');
  });

  it('keeps headers set before it on an answer given without the route', async () => {
    let runs = 0;
    const held = gate();
    const app = Fastify();
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('access-control-allow-origin', '*');
    });
    await register(app);
    app.post('/pay', async () => {
      runs++;
      await held.opened;
      return {};
    });
    const base = await serve(app);
    const first = post(`${base}/pay`, 'busy');
    await expect.poll(() => runs).toBe(1);
    const response = await post(`${base}/pay`, 'busy');
    held.open();
    expect(response.status).toBe(409);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect((await first).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('scopes keys by the route pattern, prefix included, and reaches routes of the registering scope only', async () => {
    const app = Fastify();
    let outsideRuns = 0;
    await app.register(
      async (scope) => {
        await register(scope);
        scope.post('/orders/:id/pay', async () => ({ ok: true }));
      },
      { prefix: '/v1' },
    );
    app.post('/outside', async () => {
      outsideRuns++;
      return { ok: true };
    });
    const base = await serve(app);
    // One scope for the pattern: the second order is another request under the same key.
    expect((await post(`${base}/v1/orders/42/pay?x=1`, 'p-1')).status).toBe(200);
    expect((await post(`${base}/v1/orders/43/pay`, 'p-1')).status).toBe(422);
    await post(`${base}/outside`, 'p-2');
    const again = await post(`${base}/outside`, 'p-2');
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(outsideRuns).toBe(2);
  });

  it('hands the hooks the Fastify request, so a principal can come from an earlier hook', async () => {
    const app = Fastify();
    app.decorateRequest('tenant', '');
    app.addHook('onRequest', async (request) => {
      (request as typeof request & { tenant: string }).tenant = String(
        request.headers['x-api-key'],
      );
    });
    await register(app, {
      principal: (request) => (request as typeof request & { tenant: string }).tenant,
    });
    app.post('/pay', async (request) => ({ tenant: request.headers['x-api-key'] }));
    const base = await serve(app);
    const a = await post(`${base}/pay`, 'shared', undefined, { 'x-api-key': 'acme' });
    const b = await post(`${base}/pay`, 'shared', undefined, { 'x-api-key': 'globex' });
    expect(await a.json()).toEqual({ tenant: 'acme' });
    expect(await b.json()).toEqual({ tenant: 'globex' });
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });
});
