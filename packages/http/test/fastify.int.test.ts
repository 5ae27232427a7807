import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createRouteTable } from '../src/bindingRoutes.js';
import { bindFastify } from '../src/fastify/fastifyBinding.js';
import type { HttpIdempotency } from '../src/types.js';
import { markingCentre, replayingCentre } from './bindingCentres.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
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

/** Registers the binding as a plugin that skips encapsulation, as the public plugin does. */
function register(
  app: FastifyInstance,
  centre: HttpIdempotency,
  routes?: ReturnType<typeof createRouteTable>,
) {
  const plugin = Object.assign(
    async (instance: FastifyInstance) => bindFastify(centre, routes)(instance),
    {
      [Symbol.for('skip-override')]: true,
    },
  );
  return app.register(plugin);
}

describe('Fastify binding', () => {
  it('runs the route with the context the centre gave, and sends what the centre returned', async () => {
    const centre = markingCentre();
    const app = Fastify();
    await register(app, centre);
    app.post('/pay', async (request) => ({
      key: request.idempotency?.idempotencyKey,
      token: request.idempotency?.fencingToken,
    }));
    const base = await serve(app);
    const response = await post(`${base}/pay`, 'k-1', '{}', { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-centre')).toBe('passed');
    expect(await response.json()).toEqual({ key: 'k-1', token: 7 });
    expect(centre.seen[0]).toMatchObject({ method: 'POST', url: `${base}/pay` });
  });

  it('replays the first response byte for byte: status, binary body, every set-cookie', async () => {
    const centre = replayingCentre();
    let runs = 0;
    const app = Fastify();
    await register(app, centre);
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

  it('the centre sees the body bytes as sent; the route gets the parsed body', async () => {
    const centre = replayingCentre();
    const app = Fastify();
    await register(app, centre);
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
    expect(new TextDecoder().decode(centre.seen[0]?.body)).toBe(text);
    const binary = await post(`${base}/upload`, 'b-1', BINARY, {
      'content-type': 'application/octet-stream',
    });
    expect(await binary.json()).toEqual({ length: BINARY.length });
    expect(centre.seen[1]?.body).toEqual(BINARY);
  });

  it('leaves a request the centre passes through untouched', async () => {
    const centre = replayingCentre();
    const app = Fastify();
    await register(app, centre);
    app.put('/docs/:id', async (request) => ({ body: request.body }));
    app.get('/docs/:id', async (_request, reply) => reply.header('etag', '"v1"').send({ id: 1 }));
    const base = await serve(app);
    const put = await fetch(`${base}/docs/1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'ignored' },
      body: '{"title":"x"}',
    });
    expect(await put.json()).toEqual({ body: { title: 'x' } });
    const get = await fetch(`${base}/docs/1`);
    expect(get.headers.get('etag')).toBe('"v1"');
    expect(await get.json()).toEqual({ id: 1 });
    expect(centre.seen.map((entry) => [entry.method, entry.body])).toEqual([
      ['PUT', undefined],
      ['GET', undefined],
    ]);
  });

  it('a route error reaches the centre as the 5xx Fastify renders, and a retry runs the route again', async () => {
    const centre = replayingCentre();
    let runs = 0;
    const app = Fastify();
    await register(app, centre);
    app.post('/fails', async () => {
      runs++;
      throw new Error('boom');
    });
    const base = await serve(app);
    const first = await post(`${base}/fails`, 'e-1');
    const retry = await post(`${base}/fails`, 'e-1');
    expect([first.status, retry.status]).toEqual([500, 500]);
    expect(await first.json()).toMatchObject({ message: 'boom' });
    expect(runs).toBe(2);
    expect(centre.seen.map((entry) => entry.routeStatus)).toEqual([500, 500]);
  });

  it('captures a streamed reply, and replays it whole', async () => {
    const centre = replayingCentre();
    const app = Fastify();
    await register(app, centre);
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

  it('keeps headers set before it on an answer the centre gives without the route', async () => {
    const centre = replayingCentre({ answerWithoutRoute: true });
    let runs = 0;
    const app = Fastify();
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('access-control-allow-origin', '*');
    });
    await register(app, centre);
    app.post('/pay', async () => {
      runs++;
      return {};
    });
    const base = await serve(app);
    const response = await post(`${base}/pay`, 'busy');
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toEqual({ title: 'in progress' });
    expect(runs).toBe(0);
  });

  it('passes the route pattern, prefix included, and reaches routes of the registering scope', async () => {
    const routes = createRouteTable();
    const patterns: string[] = [];
    const centre: HttpIdempotency = {
      handle(request, next) {
        patterns.push(routes.routeOf(request));
        return next(request, {
          idempotencyKey: undefined,
          fencingToken: undefined,
          attempt: undefined,
          signal: new AbortController().signal,
        });
      },
    };
    const app = Fastify();
    await app.register(
      async (scope) => {
        await register(scope, centre, routes);
        scope.post('/orders/:id/pay', async () => ({ ok: true }));
      },
      { prefix: '/v1' },
    );
    app.post('/outside', async () => ({ ok: true }));
    const base = await serve(app);
    await post(`${base}/v1/orders/42/pay?x=1`, 'p-1');
    await post(`${base}/outside`, 'p-2');
    expect(patterns).toEqual(['/v1/orders/:id/pay']);
  });
});
