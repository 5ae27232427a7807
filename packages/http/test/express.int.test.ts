import { createServer, type Server } from 'node:http';
import { memoryStore, type Store } from '@idemq/core';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { type ExpressIdempotencyOptions, idempotency } from '../src/express/index.js';
import { defaultFingerprint } from '../src/index.js';
import { gate } from './helpers.js';
import { close, listen } from './listen.js';

const servers: Server[] = [];
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function serve(app: Express): Promise<string> {
  const server = createServer(app);
  servers.push(server);
  return listen(server);
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

function appWith(setup: (app: Express) => void): Express {
  const app = express();
  setup(app);
  return app;
}

/** The middleware on a fresh memory store; `bodies` collects what each fingerprint covered. */
function middleware(options: Omit<ExpressIdempotencyOptions, 'store'> = {}) {
  const store = memoryStore();
  stores.push(store);
  const bodies: Uint8Array[] = [];
  const handler = idempotency({
    store,
    fingerprint: (req, body) => {
      bodies.push(body);
      return defaultFingerprint(req.method, req.originalUrl, body);
    },
    ...options,
  });
  return { handler, bodies };
}

describe('Express binding', () => {
  it('runs the rest of the chain with req.idempotency, and replays the first answer', async () => {
    const { handler } = middleware();
    const contexts: unknown[] = [];
    const app = appWith((a) => {
      a.use(handler);
      a.post('/pay', (req, res) => {
        contexts.push(req.idempotency);
        res.json({ key: req.idempotency?.idempotencyKey, attempt: req.idempotency?.attempt });
      });
    });
    const base = await serve(app);
    const first = await post(`${base}/pay`, 'k-1');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ key: 'k-1', attempt: 1 });
    const replay = await post(`${base}/pay`, 'k-1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual({ key: 'k-1', attempt: 1 });
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ fencingToken: expect.any(Number) });
  });

  it('replays the first response byte for byte: status, binary body, every allowed set-cookie', async () => {
    const { handler } = middleware({ replayHeaders: ['set-cookie', 'x-run'] });
    let runs = 0;
    const app = appWith((a) => {
      a.use(handler);
      a.post('/files', (_req, res) => {
        runs++;
        res.cookie('a', '1', { httpOnly: true });
        res.cookie('b', '2, with a comma');
        res
          .status(201)
          .set('x-run', String(runs))
          .type('application/octet-stream')
          .send(Buffer.from(BINARY));
      });
    });
    const base = await serve(app);
    const first = await post(`${base}/files`, 'bin');
    const firstBody = new Uint8Array(await first.arrayBuffer());
    const second = await post(`${base}/files`, 'bin');
    const secondBody = new Uint8Array(await second.arrayBuffer());

    expect(runs).toBe(1);
    expect(first.status).toBe(201);
    expect(firstBody).toEqual(BINARY);
    expect(first.headers.getSetCookie()).toEqual([
      'a=1; Path=/; HttpOnly',
      'b=2%2C%20with%20a%20comma; Path=/',
    ]);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(secondBody).toEqual(BINARY);
    expect(second.headers.getSetCookie()).toEqual(first.headers.getSetCookie());
    expect(second.headers.get('x-run')).toBe('1');
    expect(second.headers.get('content-type')).toBe('application/octet-stream');
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('after express.json(): the fingerprint covers the JSON text of req.body, the route the parsed body', async () => {
    const { handler, bodies } = middleware();
    const app = appWith((a) => {
      a.use(express.json());
      a.use(handler);
      a.post('/orders', (req, res) => {
        res.status(201).json({ received: req.body });
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/orders`, 'j-1', '{ "amount": 10,  "currency": "EUR" }', {
      'content-type': 'application/json',
    });
    expect(await response.json()).toEqual({ received: { amount: 10, currency: 'EUR' } });
    expect(new TextDecoder().decode(bodies[0])).toBe('{"amount":10,"currency":"EUR"}');
  });

  it('without a body parser: the fingerprint covers the raw bytes and the route gets them as req.body', async () => {
    const { handler, bodies } = middleware();
    let routeBody: unknown;
    const app = appWith((a) => {
      a.use(handler);
      a.post('/upload', (req, res) => {
        routeBody = req.body;
        res.sendStatus(204);
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/upload`, 'raw-1', BINARY, {
      'content-type': 'application/octet-stream',
    });
    expect(response.status).toBe(204);
    expect(new Uint8Array(bodies[0] ?? [])).toEqual(BINARY);
    expect(Buffer.isBuffer(routeBody)).toBe(true);
    expect(new Uint8Array(routeBody as Buffer)).toEqual(BINARY);
  });

  it('leaves a request it passes through untouched: the route reads the stream itself', async () => {
    const { handler, bodies } = middleware();
    const app = appWith((a) => {
      a.use(handler);
      a.put('/docs/:id', async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        res
          .status(200)
          .json({ bodyWasSet: req.body !== undefined, length: Buffer.concat(chunks).length });
      });
    });
    const base = await serve(app);
    const response = await fetch(`${base}/docs/1`, { method: 'PUT', body: BINARY });
    expect(await response.json()).toEqual({ bodyWasSet: false, length: BINARY.length });
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    expect(bodies).toEqual([]);
  });

  it('a route error is the 5xx Express renders, not stored: a retry runs the route again', async () => {
    const { handler } = middleware();
    let runs = 0;
    const app = appWith((a) => {
      a.use(handler);
      a.post('/fails', async () => {
        runs++;
        throw new Error('boom');
      });
      a.post('/next-error', (_req, _res, next) => {
        runs++;
        next(new Error('passed to next'));
      });
    });
    const base = await serve(app);
    const first = await post(`${base}/fails`, 'e-1');
    const retry = await post(`${base}/fails`, 'e-1');
    const viaNext = await post(`${base}/next-error`, 'e-2');
    expect([first.status, retry.status, viaNext.status]).toEqual([500, 500, 500]);
    expect(runs).toBe(3);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('captures a route that streams several chunks, and replays them whole', async () => {
    const { handler } = middleware({ replayHeaders: ['x-stream'] });
    const app = appWith((a) => {
      a.use(handler);
      a.post('/stream', async (_req, res) => {
        res.writeHead(202, { 'content-type': 'text/plain; charset=utf-8', 'x-stream': 'yes' });
        for (const part of ['one,', 'two,', 'three']) {
          res.write(part);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        res.end(Buffer.from(',four'));
      });
    });
    const base = await serve(app);
    const first = await post(`${base}/stream`, 's-1');
    const second = await post(`${base}/stream`, 's-1');
    expect(first.status).toBe(202);
    expect(await first.text()).toBe('one,two,three,four');
    expect(second.status).toBe(202);
    expect(second.headers.get('x-stream')).toBe('yes');
    expect(await second.text()).toBe('one,two,three,four');
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('streams a body past the stored limit through to the client while the route still writes', async () => {
    const { handler } = middleware();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const app = appWith((a) => {
      a.use(handler);
      a.post('/big', async (_req, res) => {
        res.type('text/plain');
        for (let index = 0; index < 64; index++) {
          if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        }
        res.end();
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/big`, 'big-1');
    const body = new Uint8Array(await response.arrayBuffer());
    expect(body.length).toBe(64 * chunk.length);
    expect(body.every((byte) => byte === 0x61)).toBe(true);
    const replay = await post(`${base}/big`, 'big-1');
    expect(replay.headers.get('idempotent-body-omitted')).toBe('too-large');
  });

  it('keeps headers set before the middleware on an answer given without the route', async () => {
    const { handler } = middleware();
    const held = gate();
    let runs = 0;
    const app = appWith((a) => {
      a.use((_req, res, next) => {
        res.set('access-control-allow-origin', '*');
        next();
      });
      a.use(handler);
      a.post('/pay', async (_req, res) => {
        runs++;
        await held.opened;
        res.json({});
      });
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

  it('scopes keys by the route pattern when mounted on a route, by the path when mounted app-wide', async () => {
    const routeMounted = middleware();
    const appWide = middleware();
    const app = express();
    const router = express.Router();
    router.post('/orders/:id/pay', routeMounted.handler, (_req, res) => {
      res.sendStatus(200);
    });
    app.use('/v1', router);
    app.use(appWide.handler);
    app.post('/plain/:id', (_req, res) => {
      res.sendStatus(200);
    });
    const base = await serve(app);
    // One scope for the pattern: the second order is another request under the same key.
    expect((await post(`${base}/v1/orders/42/pay?x=1`, 'p-1')).status).toBe(200);
    expect((await post(`${base}/v1/orders/43/pay`, 'p-1')).status).toBe(422);
    // App-wide, each path is a scope of its own.
    expect((await post(`${base}/plain/x`, 'p-2')).status).toBe(200);
    expect((await post(`${base}/plain/y`, 'p-2')).status).toBe(200);
  });

  it('hands the hooks the Express request, so a principal can come from an earlier middleware', async () => {
    const { handler } = middleware({
      principal: (req) => (req as typeof req & { tenant?: string }).tenant,
    });
    const app = appWith((a) => {
      a.use((req, _res, next) => {
        (req as typeof req & { tenant?: string }).tenant = req.get('x-api-key');
        next();
      });
      a.use(handler);
      a.post('/pay', (req, res) => {
        res.json({ tenant: req.get('x-api-key') });
      });
    });
    const base = await serve(app);
    const a = await post(`${base}/pay`, 'shared', undefined, { 'x-api-key': 'acme' });
    const b = await post(`${base}/pay`, 'shared', undefined, { 'x-api-key': 'globex' });
    expect(await a.json()).toEqual({ tenant: 'acme' });
    expect(await b.json()).toEqual({ tenant: 'globex' });
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });
});
