import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createGuard, type HttpFront } from '../guard.js';
import type { NodeAnswer, NodeHeaders } from '../node/nodeAnswer.js';
import { headerOf, nodeAnswers, pathOf } from '../node/nodeFrontParts.js';
import type { HttpContext, HttpIdempotencyOptions } from '../types.js';
import { type BodyTap, hasParsedBody, tapRequestBody } from './requestBodyTap.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The idempotent run this request is part of; `null` until the binding has run. */
    idempotency: HttpContext | null;
  }
}

/** The options of the Fastify plugin: its hooks get the Fastify request (`request.user`…). */
export type FastifyIdempotencyOptions = HttpIdempotencyOptions<FastifyRequest>;

/** Where one request is between the binding's hooks. */
interface InFlight {
  /** `route` while the route runs, `answered` when the guard answered without it. */
  phase: 'route' | 'answered' | 'done';
  baseline: Record<string, unknown>;
  routeAnswer: (answer: NodeAnswer) => void;
  finalAnswer: Promise<NodeAnswer>;
}

/**
 * Installs the hooks on `fastify`: `preParsing` keeps a copy of the body bytes; `preHandler`
 * hands the request to the guard and either lets the route run (the guard called `next`) or
 * replies with the guard's own answer; `onSend` turns the route's reply into the answer `next`
 * resolves with and replaces it with the answer the guard settles on.
 */
export function bindFastify(
  options: FastifyIdempotencyOptions,
): (fastify: FastifyInstance) => void {
  const taps = new WeakMap<FastifyRequest, BodyTap>();
  const guard = createGuard(options, fastifyFront(taps), 'idempotencyPlugin (@idemq/http/fastify)');
  return function install(fastify) {
    const inFlight = new WeakMap<FastifyRequest, InFlight>();
    if (!fastify.hasRequestDecorator('idempotency')) fastify.decorateRequest('idempotency', null);

    fastify.addHook('preParsing', async (request, _reply, payload) => {
      if (!hasParsedBody(request)) return payload;
      const { stream, tap } = tapRequestBody(payload);
      taps.set(request, tap);
      return stream;
    });

    fastify.addHook('preHandler', async (request, reply) => {
      let proceed!: (ctx: HttpContext) => void;
      const proceeded = new Promise<HttpContext>((resolve) => {
        proceed = resolve;
      });
      let routeAnswer!: (answer: NodeAnswer) => void;
      const routeResult = new Promise<NodeAnswer>((resolve) => {
        routeAnswer = resolve;
      });
      let nextCalled = false;
      const finalAnswer = guard(request, (_request, ctx) => {
        if (nextCalled) return Promise.reject(new Error('the route runs once per request'));
        nextCalled = true;
        proceed(ctx);
        return routeResult;
      });
      // Awaited in onSend when the route runs; this keeps an early failure from going unobserved.
      finalAnswer.catch(() => {});
      const state: InFlight = {
        phase: 'route',
        baseline: { ...reply.getHeaders() },
        routeAnswer,
        finalAnswer,
      };
      inFlight.set(request, state);

      const first = await Promise.race([
        proceeded.then((ctx) => ({ ctx })),
        finalAnswer.then((answer) => ({ answer })),
      ]);
      if ('ctx' in first) {
        request.idempotency = first.ctx;
        return;
      }
      state.phase = 'answered';
      applyHead(reply, first.answer, state.baseline);
      return reply.send(payloadOf(first.answer));
    });

    fastify.addHook('onSend', async (request, reply, payload) => {
      const state = inFlight.get(request);
      if (state === undefined || state.phase !== 'route') return payload;
      state.phase = 'done';
      state.routeAnswer({
        status: reply.statusCode,
        headers: reply.getHeaders() as NodeHeaders,
        body: routePayload(payload),
      });
      const answer = await state.finalAnswer;
      applyHead(reply, answer, state.baseline);
      return payloadOf(answer);
    });
  };
}

/** How the guard reads a Fastify request: the route pattern as the route, the tapped body. */
function fastifyFront(
  taps: WeakMap<FastifyRequest, BodyTap>,
): HttpFront<FastifyRequest, NodeAnswer> {
  return {
    method: (request) => request.method,
    header: (request, name) => headerOf(request.headers, name),
    path: (request) => request.routeOptions.url ?? pathOf(request.url),
    target: (request) => request.url,
    async readBody(request) {
      const tap = taps.get(request);
      return { bytes: tap === undefined ? new Uint8Array(0) : tap.bytes(), forwarded: request };
    },
    ...nodeAnswers,
  };
}

/** The route's serialized payload as an answer body (Fastify serialized objects already). */
function routePayload(payload: unknown): NodeAnswer['body'] {
  if (typeof payload === 'string' || payload instanceof Uint8Array) return payload;
  if (payload instanceof Readable) return payload;
  return null;
}

/** Replaces the reply's status and headers with the answer's, over the headers set earlier. */
function applyHead(
  reply: FastifyReply,
  answer: NodeAnswer,
  baseline: Record<string, unknown>,
): void {
  for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
  for (const [name, value] of Object.entries(baseline)) {
    if (value !== undefined) reply.header(name, value);
  }
  if (answer.headers !== undefined) {
    for (const name in answer.headers) reply.header(name, answer.headers[name]);
  }
  reply.code(answer.status);
}

/**
 * The answer's body as a Fastify payload: bytes (a string as UTF-8 bytes, so that Fastify adds no
 * charset to the content type), or a stream of the chunks still to come.
 */
function payloadOf(answer: NodeAnswer): Buffer | Readable | null {
  const { body } = answer;
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Readable.from(body);
}
