// Test glue: a fetch-style route at /r of a Fastify 5 app. Plain JavaScript, so that the
// conformance harness and its forked server process (which runs without a TypeScript loader)
// mount the route the same way.
import { Readable } from 'node:stream';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Mounts `route` at /r of `app` (after the binding's plugin was registered) for every method the
 * suite sends: every body is parsed as its raw bytes, the route gets a WHATWG Request, and its
 * Response goes to `reply`, the body as a stream.
 */
export function mountFastifyRoute(app, route) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.route({
    method: METHODS,
    url: '/r',
    handler: async (request, reply) => {
      if (request.idempotency === null) throw new Error('the binding set no request.idempotency');
      const response = await route(webRequest(request), request.idempotency);
      reply.code(response.status);
      for (const [name, value] of response.headers) {
        if (name !== 'set-cookie') reply.header(name, value);
      }
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) reply.header('set-cookie', cookies);
      return reply.send(response.body === null ? null : Readable.fromWeb(response.body));
    },
  });
}

function webRequest(request) {
  const headers = new Headers();
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  return new Request(new URL(request.url, `http://${request.host}`), {
    method: request.method,
    headers,
    body: hasBody ? (request.body ?? Buffer.alloc(0)) : null,
  });
}
