import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  forkServerProcess,
  type HttpHarness,
  type HttpProcess,
  type HttpProcessSetup,
  type HttpRoute,
} from '@idemq/conformance';
import { memoryStore, type Store, uuidv7 } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { freePort } from '@idemq/services';
import Fastify, { type FastifyRequest } from 'fastify';
import { Hono } from 'hono';
import { idempotency as expressIdempotency } from '../src/express/index.js';
import { idempotencyPlugin } from '../src/fastify/index.js';
import { type IdempotencyEnv, idempotency } from '../src/hono/index.js';
import {
  createHttpIdempotency,
  type HttpIdempotency,
  type HttpIdempotencyOptions,
} from '../src/index.js';
import { idempotency as nodeIdempotency } from '../src/node/index.js';
import { expressApp } from './expressRoute.mjs';
import { mountFastifyRoute } from './fastifyRoute.mjs';
import { serveFetch } from './fetchServer.js';
import { REDIS_URL } from './helpers.js';
import { close, listen } from './listen.js';
import { incomingOptions, nodeOptions, nodeRoute } from './nodeRoute.mjs';

/** Every method the suite sends; the harnesses mount its route for each at /r. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const PROCESS_ENTRY = fileURLToPath(new URL('./conformanceProcess.mjs', import.meta.url));

export type Binding = 'centre' | 'node' | 'hono' | 'express' | 'fastify';
export type StoreKind = 'memory' | 'redis';

/** Makes the centre a test serves; a negative control wraps it in a broken one. */
export type MakeCentre = (options: HttpIdempotencyOptions) => HttpIdempotency;

/** A Redis store with a key prefix of its own, so that runs never meet. */
function redis(prefix = `idemq-http-conformance-${uuidv7()}`): Store {
  return redisStore({ url: REDIS_URL, prefix });
}

/** The stores of a harness: memory (in-process only) or Redis (down store and processes too). */
function storeParts(kind: StoreKind): Pick<HttpHarness, 'createStore' | 'createUnreachableStore'> {
  if (kind === 'memory') return { createStore: async () => memoryStore() };
  return {
    createStore: async () => redis(),
    createUnreachableStore: async () =>
      redisStore({ url: `redis://127.0.0.1:${await freePort()}`, commandTimeoutMs: 300 }),
  };
}

/** The fetch centre, `createHttpIdempotency(options).handle`, served by node:http. */
export function centreHarness(kind: StoreKind, makeCentre: MakeCentre = createHttpIdempotency) {
  return {
    name: `fetch centre (${kind} store)`,
    ...storeParts(kind),
    start: async ({ options, route }) => {
      const centre = makeCentre(options);
      return serveFetch((request) => centre.handle(request, route));
    },
    ...(kind === 'redis' ? { startProcess: (setup) => startProcess('centre', setup) } : {}),
  } satisfies HttpHarness;
}

/** The node:http binding, `idempotency(options)(route)` as a server's request listener. */
export function nodeHarness(kind: StoreKind) {
  return {
    name: `node:http (${kind} store)`,
    ...storeParts(kind),
    start: async ({ options, route }) => {
      const listener = nodeIdempotency(nodeOptions(options))(nodeRoute(route));
      const server = createServer((req, res) => void listener(req, res));
      return { url: await listen(server), close: () => close(server) };
    },
    ...(kind === 'redis' ? { startProcess: (setup) => startProcess('node', setup) } : {}),
  } satisfies HttpHarness;
}

/** The Hono middleware, `app.use(idempotency(options))`, served by node:http. */
export function honoHarness(kind: StoreKind) {
  return {
    name: `hono (${kind} store)`,
    ...storeParts(kind),
    start: async ({ options, route }) => {
      const app = honoApp(options, route);
      return serveFetch(async (request) => app.fetch(request));
    },
    ...(kind === 'redis' ? { startProcess: (setup) => startProcess('hono', setup) } : {}),
  } satisfies HttpHarness;
}

function honoApp(options: HttpIdempotencyOptions, route: HttpRoute) {
  const app = new Hono<IdempotencyEnv>();
  app.use(idempotency(options));
  app.on(METHODS, '/r', (c) => route(c.req.raw, c.get('idempotency')));
  return app;
}

/** The Express middleware, `app.use(idempotency(options))` (Express 5, no body parser). */
export function expressHarness(kind: StoreKind) {
  return {
    name: `express (${kind} store)`,
    ...storeParts(kind),
    start: async ({ options, route }) => {
      const server = createServer(expressApp(expressIdempotency(incomingOptions(options)), route));
      return { url: await listen(server), close: () => close(server) };
    },
    ...(kind === 'redis' ? { startProcess: (setup) => startProcess('express', setup) } : {}),
  } satisfies HttpHarness;
}

/** The Fastify plugin, `app.register(idempotencyPlugin, options)` (Fastify 5). */
export function fastifyHarness(kind: StoreKind) {
  return {
    name: `fastify (${kind} store)`,
    ...storeParts(kind),
    start: async ({ options, route }) => {
      const app = Fastify();
      await app.register(
        idempotencyPlugin,
        incomingOptions(options, (request: FastifyRequest) => request.raw),
      );
      mountFastifyRoute(app, route);
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      return { url, close: () => app.close() };
    },
    ...(kind === 'redis' ? { startProcess: (setup) => startProcess('fastify', setup) } : {}),
  } satisfies HttpHarness;
}

/**
 * Forks conformanceProcess.mjs (the built package) on Redis with a prefix shared by every
 * process of one scope, as instances of one API share their store.
 */
async function startProcess(binding: Binding, setup: HttpProcessSetup): Promise<HttpProcess> {
  const config = {
    binding,
    redisUrl: REDIS_URL,
    prefix: `idemq-http-conformance-${setup.options.scope}`,
    options: setup.options,
    route: setup.route,
  };
  const server = await forkServerProcess<{ url: string }>(PROCESS_ENTRY, config);
  return { url: server.ready.url, kill: server.kill, close: server.close };
}
