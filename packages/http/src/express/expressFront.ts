import type { Request as ExpressRequest } from 'express';
import type { HttpFront } from '../guard.js';
import type { NodeAnswer } from '../node/nodeAnswer.js';
import { headerOf, nodeAnswers, pathOf, readRequestBody } from '../node/nodeFrontParts.js';

/** Route patterns (`/orders/:id`) of requests whose middleware is mounted on a route. */
export type RoutePatterns = WeakMap<ExpressRequest, string>;

/**
 * How the guard reads an Express request: node's request with Express's `originalUrl`, the route
 * pattern as the default route, and the body a parser already read or the raw stream.
 */
export function expressFront(patterns: RoutePatterns): HttpFront<ExpressRequest, NodeAnswer> {
  return {
    method: (req) => req.method,
    header: (req, name) => headerOf(req.headers, name),
    path: (req) => patterns.get(req) ?? pathOf(req.originalUrl),
    target: (req) => req.originalUrl,
    async readBody(req) {
      return { bytes: await bodyBytes(req), forwarded: req };
    },
    ...nodeAnswers,
  };
}

/**
 * The body the fingerprint covers: when a body parser already consumed the stream, the bytes of
 * what it produced (a Buffer as it is, a string as UTF-8, anything else as its JSON text);
 * otherwise the raw stream, read here and left for the route as `req.body` (a Buffer).
 */
async function bodyBytes(req: ExpressRequest): Promise<Uint8Array> {
  if (streamConsumed(req)) return parsedBodyBytes(req.body);
  const raw = await readRequestBody(req);
  if (req.body === undefined) req.body = raw;
  return raw;
}

/** True when something (a body parser) already read the request stream. */
function streamConsumed(req: ExpressRequest): boolean {
  return req.readableEnded || (req as { _body?: unknown })._body === true;
}

function parsedBodyBytes(body: unknown): Uint8Array {
  if (body === undefined || body === null) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body) ?? '', 'utf8');
}
