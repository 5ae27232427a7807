// A server process for the HTTP conformance suite's crash case (H08), forked by
// conformanceHarnesses.ts: the built package (dist) in front of the suite's process route, on a
// Redis store that outlives the process. It sends its URL to the parent once listening.
import { createServer } from 'node:http';
import { processRoute } from '@idemq/conformance/http-process';
import { createHttpIdempotency } from '@idemq/http';
import { idempotency } from '@idemq/http/hono';
import { redisStore } from '@idemq/redis';
import { Hono } from 'hono';

const { binding, redisUrl, prefix, options, route: routeSetup } = JSON.parse(process.argv[2]);
const store = redisStore({ url: redisUrl, prefix });
const route = processRoute(routeSetup);
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

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

const handler = fetchHandler();
const server = createServer((req, res) => {
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
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ url: `http://127.0.0.1:${server.address().port}` });
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => store.close().finally(() => process.exit(0)));
});
