/**
 * The servers the HTTP benchmark loads, one per child process: the same no-op POST route
 * (`201 {"ok":true}`) bare or behind an idempotency layer, every layer on the same Redis.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '@idemq/core';
import { createHttpIdempotency } from '@idemq/http';
import { idempotency as expressIdempotency } from '@idemq/http/express';
import { idempotencyPlugin } from '@idemq/http/fastify';
import { idempotency } from '@idemq/http/node';
import { redisStore } from '@idemq/redis';
import express from 'express';
import idempotencyMiddleware from 'express-idempotency';
import redisAdapterPackage from 'express-idempotency-redis-adapter';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import type { SessionHandle } from '../childSession.js';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import type { CountersRequest } from '../serverBench.js';
import type { HttpServerInit, ServerCounters } from './types.js';

// A CommonJS module whose class is `exports.default`.
const RedisAdapter = redisAdapterPackage.default;
type RedisAdapter = InstanceType<typeof RedisAdapter>;

const BODY = JSON.stringify({ ok: true });
const LEASE_MS = 40_000;
const TTL_MS = 86_400_000;

/** Opens the server `init` names on 127.0.0.1 (a port the OS picks). */
export async function openHttpServer(
  init: HttpServerInit,
): Promise<SessionHandle<CountersRequest, ServerCounters, { maxRssBytes: number }>> {
  const counts = { routeRuns: 0 };
  const sent = new CommandCounter();
  let baseline = 0;
  let cpuBaseline = process.cpuUsage();
  const closers: (() => Promise<unknown>)[] = [];
  let listener: (req: IncomingMessage, res: ServerResponse) => void;

  switch (init.server) {
    case 'bare':
      listener = (req, res) => {
        drain(req, () => {
          counts.routeRuns++;
          res.writeHead(201, { 'content-type': 'application/json' }).end(BODY);
        });
      };
      break;
    case 'idemq': {
      const store = await countedStore(init, sent, closers);
      const idempotent = idempotency({ store, scope: 'bench' });
      listener = idempotent(async () => {
        counts.routeRuns++;
        return { status: 201, headers: { 'content-type': 'application/json' }, body: BODY };
      });
      break;
    }
    case 'idemq-centre': {
      const store = await countedStore(init, sent, closers);
      const centre = createHttpIdempotency({ store, scope: 'bench' });
      const route = async () => {
        counts.routeRuns++;
        return new Response(BODY, { status: 201, headers: { 'content-type': 'application/json' } });
      };
      listener = (req, res) => {
        void (async () => {
          const response = await centre.handle(await toRequest(req), route);
          const body = Buffer.from(await response.arrayBuffer());
          res.writeHead(response.status, Object.fromEntries(response.headers)).end(body);
        })().catch((error: unknown) => fail(res, error));
      };
      break;
    }
    case 'hand': {
      const client = countIoredis(new Redis(init.redisUrl, { maxRetriesPerRequest: 1 }), sent);
      await client.ping();
      closers.push(() => client.quit());
      const prefix = `${init.namespace}:hand:`;
      listener = (req, res) => {
        void handWritten(client, prefix, req, res, () => {
          counts.routeRuns++;
          return { status: 201, body: BODY };
        }).catch((error: unknown) => fail(res, error));
      };
      break;
    }
    case 'fastify':
    case 'idemq-fastify': {
      const app = Fastify();
      if (init.server === 'idemq-fastify') {
        const store = await countedStore(init, sent, closers);
        await app.register(idempotencyPlugin, { store, scope: 'bench' });
      }
      app.post('/pay', async (_request, reply) => {
        counts.routeRuns++;
        return reply.code(201).send({ ok: true });
      });
      await app.ready();
      closers.push(() => app.close());
      listener = (req, res) => app.routing(req, res);
      break;
    }
    case 'express': {
      const app = express();
      app.post('/pay', express.json(), (_req, res) => {
        counts.routeRuns++;
        res.status(201).json({ ok: true });
      });
      listener = app;
      break;
    }
    case 'idemq-express': {
      const store = await countedStore(init, sent, closers);
      const app = express();
      // As the binding's README says: after the body parser.
      app.post(
        '/pay',
        express.json(),
        expressIdempotency({ store, scope: 'bench' }),
        (_req, res) => {
          counts.routeRuns++;
          res.status(201).json({ ok: true });
        },
      );
      listener = app;
      break;
    }
    case 'express-idempotency': {
      const adapter = new RedisAdapter({
        connectionConfig: { url: init.redisUrl },
        ttl: TTL_MS / 1000,
      });
      await adapter.connect();
      closers.push(() => adapter.disconnect());
      countAdapterCalls(adapter, sent);
      const app = express();
      // As its README wires it: the middleware with the Redis adapter, then the routes.
      app.use(idempotencyMiddleware.idempotency({ dataAdapter: adapter }));
      app.post('/pay', express.json(), (_req, res) => {
        counts.routeRuns++;
        res.status(201).json({ ok: true });
      });
      listener = app;
      break;
    }
  }

  const server = createServer({ keepAlive: true }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    async round({ reset }) {
      const cpu = process.cpuUsage(cpuBaseline);
      const result = {
        routeRuns: counts.routeRuns,
        redisRoundTrips: sent.snapshot().total - baseline,
        cpuMicros: cpu.user + cpu.system,
        port,
      };
      if (reset) {
        counts.routeRuns = 0;
        baseline = sent.snapshot().total;
        cpuBaseline = process.cpuUsage();
      }
      return result;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const close of closers) await close().catch(() => undefined);
      return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
    },
  };
}

/** A Redis store whose commands are counted, closed with the server. */
async function countedStore(
  init: HttpServerInit,
  sent: CommandCounter,
  closers: (() => Promise<unknown>)[],
): Promise<Store> {
  const client = countIoredis(new Redis(init.redisUrl, { maxRetriesPerRequest: 1 }), sent);
  const store = redisStore({ client, prefix: `${init.namespace}:${init.server}` });
  await store.ready();
  closers.push(() => client.quit());
  return store;
}

/**
 * The middleware a user writes by hand: `GET` the stored response (a replay answers it);
 * otherwise `SET key pending NX PX lease`, run the route, `SET key <response> PX ttl`. A failed
 * `SET NX` answers 409. Correct on the happy path; no fingerprint, no fencing, no lease renewal.
 */
async function handWritten(
  client: Redis,
  prefix: string,
  req: IncomingMessage,
  res: ServerResponse,
  route: () => { status: number; body: string },
): Promise<void> {
  await readBody(req);
  const header = req.headers['idempotency-key'];
  if (typeof header !== 'string' || header.length === 0) {
    res.writeHead(400).end();
    return;
  }
  const key = prefix + header;
  const stored = await client.get(key);
  if (stored !== null && stored !== 'pending') {
    const { status, body } = JSON.parse(stored) as { status: number; body: string };
    res
      .writeHead(status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' })
      .end(body);
    return;
  }
  const claimed = stored === null && (await client.set(key, 'pending', 'PX', LEASE_MS, 'NX'));
  if (!claimed) {
    res.writeHead(409, { 'retry-after': '1' }).end();
    return;
  }
  const response = route();
  await client.set(key, JSON.stringify(response), 'PX', TTL_MS);
  res.writeHead(response.status, { 'content-type': 'application/json' }).end(response.body);
}

/** Each method of the Redis adapter sends exactly one command (GET, SET, SET or DEL). */
function countAdapterCalls(adapter: RedisAdapter, sent: CommandCounter): void {
  const methods = {
    findByIdempotencyKey: 'get',
    create: 'set',
    update: 'set',
    delete: 'del',
  } as const;
  for (const [method, command] of Object.entries(methods) as [keyof typeof methods, string][]) {
    const original = adapter[method].bind(adapter) as (...args: unknown[]) => Promise<unknown>;
    (adapter as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      sent.add(command);
      return original(...args);
    };
  }
}

function drain(req: IncomingMessage, then: () => void): void {
  req.resume();
  req.once('end', then);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const body = await readBody(req);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  return new Request(`http://127.0.0.1${req.url ?? '/'}`, {
    method: req.method ?? 'POST',
    headers,
    body: body.length > 0 ? body : null,
  });
}

function fail(res: ServerResponse, error: unknown): void {
  if (!res.headersSent) res.writeHead(500);
  res.end(error instanceof Error ? error.message : String(error));
}
