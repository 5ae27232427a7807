// A server process for the HTTP conformance suite's crash case (H08), forked by
// conformanceHarnesses.ts: the built package (dist) in front of the suite's process route, on a
// Redis store that outlives the process. It sends its URL to the parent once listening.
import { createServer } from 'node:http';
import { processRoute } from '@idemq/conformance/http-process';
import { createHttpIdempotency } from '@idemq/http';
import { idempotency as expressIdempotency } from '@idemq/http/express';
import { idempotencyPlugin } from '@idemq/http/fastify';
import { idempotency } from '@idemq/http/hono';
import { idempotency as nodeIdempotency } from '@idemq/http/node';
import { redisStore } from '@idemq/redis';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { expressApp } from './expressRoute.mjs';
import { mountFastifyRoute } from './fastifyRoute.mjs';
import { nodeOptions, nodeRoute } from './nodeRoute.mjs';

const { binding, redisUrl, prefix, options, route: routeSetup } = JSON.parse(process.argv[2]);
const store = redisStore({ url: redisUrl, prefix });
const route = processRoute(routeSetup);
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Starts the binding's server on 127.0.0.1; resolves with its URL and how to stop it. */
async function serve() {
  if (binding === 'fastify') {
    const app = Fastify();
    await app.register(idempotencyPlugin, { ...options, store });
    mountFastifyRoute(app, route);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, stop: () => app.close() };
  }
  const server =
    binding === 'express'
      ? createServer(expressApp(expressIdempotency({ ...options, store }), route))
      : binding === 'node'
        ? createServer(nodeIdempotency(nodeOptions({ ...options, store }))(nodeRoute(route)))
        : createServer(fetchListener(fetchHandler()));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

function fetchHandler() {
  if (binding === 'hono') {
    const app = new Hono();
    app.use(idempotency({ ...options, store }));
    app.on(METHODS, '/r', (c) => route(c.req.raw, c.get('idempotency')));
    return (request) => app.fetch(request);
  }
  const centre = createHttpIdempotency({ ...options, store });
  return (request) => centre.handle(request, route);
}

/** A node:http listener serving a fetch-style handler (the centre, Hono). */
function fetchListener(handler) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : null,
      });
      const response = await handler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  };
}

const { url, stop } = await serve();
process.send?.({ url });
process.on('SIGTERM', () => {
  stop().then(() => store.close().finally(() => process.exit(0)));
});
