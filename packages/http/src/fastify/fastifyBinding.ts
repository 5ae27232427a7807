import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  isNullBodyStatus,
  nodeHeaderEntries,
  requestHeaders,
  responseHeaders,
} from '../bindingHeaders.js';
import type { RouteTable } from '../bindingRoutes.js';
import type { HttpContext, HttpIdempotency } from '../types.js';
import { type BodyTap, hasParsedBody, tapRequestBody } from './requestBodyTap.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The idempotent run this request is part of; `null` until the binding has run. */
    idempotency: HttpContext | null;
  }
}

/** Where one request is between the binding's hooks. */
interface InFlight {
  tap: BodyTap | undefined;
  /** `route` while the route runs, `answered` when the centre answered without it. */
  phase: 'route' | 'answered' | 'done';
  baseline: Record<string, unknown>;
  routeResponse: (response: Response) => void;
  finalResponse: Promise<Response>;
}

// The WHATWG Request constructor refuses these methods; they are never idempotent writes anyway.
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * Installs the hooks on `fastify`: `preParsing` keeps a copy of the body bytes; `preHandler`
 * hands the centre a WHATWG Request and either lets the route run (the centre called `next`) or
 * replies with the centre's own Response; `onSend` turns the route's reply into the Response
 * `next` resolves with and replaces it with the Response the centre returns.
 */
export function bindFastify(
  centre: HttpIdempotency,
  routes?: RouteTable,
): (fastify: FastifyInstance) => void {
  return function install(fastify) {
    const inFlight = new WeakMap<FastifyRequest, InFlight>();
    const taps = new WeakMap<FastifyRequest, BodyTap>();
    if (!fastify.hasRequestDecorator('idempotency')) fastify.decorateRequest('idempotency', null);

    fastify.addHook('preParsing', async (request, _reply, payload) => {
      if (!hasParsedBody(request) || FORBIDDEN_METHODS.has(request.method)) return payload;
      const { stream, tap } = tapRequestBody(payload);
      taps.set(request, tap);
      return stream;
    });

    fastify.addHook('preHandler', async (request, reply) => {
      if (FORBIDDEN_METHODS.has(request.method)) return;
      const tap = taps.get(request);
      const web = new Request(requestUrl(request), {
        method: request.method,
        headers: requestHeaders(request.raw.rawHeaders),
        body: tap === undefined ? null : new Uint8Array(tap.bytes()),
      });
      const pattern = request.routeOptions.url;
      if (routes !== undefined && pattern !== undefined) routes.remember(web, pattern);

      let proceed!: (ctx: HttpContext) => void;
      const proceeded = new Promise<HttpContext>((resolve) => {
        proceed = resolve;
      });
      let routeResponse!: (response: Response) => void;
      const routeResult = new Promise<Response>((resolve) => {
        routeResponse = resolve;
      });
      let nextCalled = false;
      const finalResponse = centre.handle(web, (_request, ctx) => {
        if (nextCalled) return Promise.reject(new Error('the route runs once per request'));
        nextCalled = true;
        proceed(ctx);
        return routeResult;
      });
      // Awaited in onSend when the route runs; this keeps an early failure from going unobserved.
      finalResponse.catch(() => {});
      const state: InFlight = {
        tap,
        phase: 'route',
        baseline: { ...reply.getHeaders() },
        routeResponse,
        finalResponse,
      };
      inFlight.set(request, state);

      const first = await Promise.race([
        proceeded.then((ctx) => ({ ctx })),
        finalResponse.then((response) => ({ response })),
      ]);
      if ('ctx' in first) {
        request.idempotency = first.ctx;
        return;
      }
      state.phase = 'answered';
      applyHead(reply, first.response, state.baseline);
      return reply.send(await bodyOf(first.response, false));
    });

    fastify.addHook('onSend', async (request, reply, payload) => {
      const state = inFlight.get(request);
      if (state === undefined || state.phase !== 'route') return payload;
      state.phase = 'done';
      const streamed = payload instanceof Readable;
      state.routeResponse(capturedResponse(reply, payload));
      const response = await state.finalResponse;
      applyHead(reply, response, state.baseline);
      return bodyOf(response, streamed);
    });
  };
}

function requestUrl(request: FastifyRequest): string {
  try {
    return new URL(request.url, `${request.protocol}://${request.host}`).href;
  } catch {
    // A Host header that is not a valid authority: the path still identifies the resource.
    return new URL(request.url, 'http://localhost').href;
  }
}

/** The route's reply as a Response: status, the headers set so far, the serialized payload. */
function capturedResponse(reply: FastifyReply, payload: unknown): Response {
  const status = reply.statusCode;
  let body: ConstructorParameters<typeof Response>[0] = null;
  if (!isNullBodyStatus(status)) {
    if (typeof payload === 'string') body = payload;
    else if (payload instanceof Uint8Array) body = new Uint8Array(payload);
    else if (payload instanceof Readable)
      body = Readable.toWeb(payload) as ReadableStream<Uint8Array>;
  }
  return new Response(body, { status, headers: responseHeaders(reply.getHeaders()) });
}

/** Replaces the reply's status and headers with the Response's, over the headers set earlier. */
function applyHead(
  reply: FastifyReply,
  response: Response,
  baseline: Record<string, unknown>,
): void {
  for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
  for (const [name, value] of Object.entries(baseline)) {
    if (value !== undefined) reply.header(name, value);
  }
  for (const [name, value] of nodeHeaderEntries(response.headers)) reply.header(name, value);
  reply.code(response.status);
}

/** The Response's body as a Fastify payload: a stream if the route streamed, else bytes. */
async function bodyOf(response: Response, stream: boolean): Promise<Buffer | Readable | null> {
  if (response.body === null) return null;
  if (stream) return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  return Buffer.from(await response.arrayBuffer());
}
