import { createServer, type Server } from 'node:http';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createRouteTable } from '../src/bindingRoutes.js';
import { bindExpress } from '../src/express/expressBinding.js';
import type { HttpIdempotency } from '../src/types.js';
import { markingCentre, replayingCentre } from './bindingCentres.js';
import { close, listen } from './listen.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
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

describe('Express binding', () => {
  it('runs the route with the context the centre gave, and sends what the centre returned', async () => {
    const centre = markingCentre();
    const app = appWith((a) => {
      a.use(bindExpress(centre));
      a.post('/pay', (req, res) => {
        res.json({ key: req.idempotency?.idempotencyKey, token: req.idempotency?.fencingToken });
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/pay`, 'k-1');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-centre')).toBe('passed');
    expect(await response.json()).toEqual({ key: 'k-1', token: 7 });
    expect(centre.seen[0]).toMatchObject({ method: 'POST', url: `${base}/pay` });
  });

  it('replays the first response byte for byte: status, binary body, every set-cookie', async () => {
    const centre = replayingCentre();
    let runs = 0;
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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

  it('after express.json(): the centre sees the JSON text of req.body, the route the parsed body', async () => {
    const centre = replayingCentre();
    const app = appWith((a) => {
      a.use(express.json());
      a.use(bindExpress(centre));
      a.post('/orders', (req, res) => {
        res.status(201).json({ received: req.body });
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/orders`, 'j-1', '{ "amount": 10,  "currency": "EUR" }', {
      'content-type': 'application/json',
    });
    expect(await response.json()).toEqual({ received: { amount: 10, currency: 'EUR' } });
    expect(new TextDecoder().decode(centre.seen[0]?.body)).toBe('{"amount":10,"currency":"EUR"}');
  });

  it('without a body parser: the centre sees the raw bytes and the route gets them as req.body', async () => {
    const centre = replayingCentre();
    let routeBody: unknown;
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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
    expect(centre.seen[0]?.body).toEqual(BINARY);
    expect(Buffer.isBuffer(routeBody)).toBe(true);
    expect(new Uint8Array(routeBody as Buffer)).toEqual(BINARY);
  });

  it('leaves a request the centre passes through untouched: the route reads the stream itself', async () => {
    const centre = replayingCentre();
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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
    expect(centre.seen[0]).toMatchObject({ method: 'PUT', body: undefined });
  });

  it('a route error reaches the centre as the 5xx Express renders, and a retry runs the route again', async () => {
    const centre = replayingCentre();
    let runs = 0;
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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
    expect(centre.seen.map((entry) => entry.routeStatus)).toEqual([500, 500, 500]);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('captures a route that streams several chunks, and replays them whole', async () => {
    const centre = replayingCentre();
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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

  it('streams a large body through to the client while the route is still writing', async () => {
    const centre = markingCentre();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const app = appWith((a) => {
      a.use(bindExpress(centre));
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
  });

  it('keeps headers set before the middleware on an answer the centre gives without the route', async () => {
    const centre = replayingCentre({ answerWithoutRoute: true });
    let runs = 0;
    const app = appWith((a) => {
      a.use((_req, res, next) => {
        res.set('access-control-allow-origin', '*');
        next();
      });
      a.use(bindExpress(centre));
      a.post('/pay', (_req, res) => {
        runs++;
        res.json({});
      });
    });
    const base = await serve(app);
    const response = await post(`${base}/pay`, 'busy');
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(runs).toBe(0);
  });

  it('passes the route pattern when mounted on a route, the path when mounted app-wide', async () => {
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
    const app = express();
    const router = express.Router();
    router.post('/orders/:id/pay', bindExpress(centre, routes), (_req, res) => {
      res.sendStatus(200);
    });
    app.use('/v1', router);
    app.post('/plain/:id', (req, res, next) =>
      req.params.id === 'x' ? next() : res.sendStatus(404),
    );
    app.use(bindExpress(centre, routes));
    app.post('/plain/:id', (_req, res) => {
      res.sendStatus(200);
    });
    const base = await serve(app);
    await post(`${base}/v1/orders/42/pay?x=1`, 'p-1');
    await post(`${base}/plain/x`, 'p-2');
    expect(patterns).toEqual(['/v1/orders/:id/pay', '/plain/x']);
  });
});
