import type { IncomingMessage, ServerResponse } from 'node:http';
import { OptionsCheck } from '@idemq/core/adapter';
import { createGuard, type HttpFront } from '../guard.js';
import type { HttpContext, HttpIdempotencyOptions } from '../types.js';
import { assertAnswerStatus, type NodeAnswer, problemAnswer, writeAnswer } from './nodeAnswer.js';
import { headerOf, nodeAnswers, pathOf, readRequestBody } from './nodeFrontParts.js';

/** What a node route sees: the record's context and the request body, read once. */
export interface NodeContext extends HttpContext {
  /** The request body bytes (read whole on first call; the binding already read a covered one). */
  body(): Promise<Uint8Array>;
}

/** A node:http route: it answers with a plain object, which the binding writes (or stores). */
export type NodeRoute = (
  req: IncomingMessage,
  ctx: NodeContext,
) => NodeAnswer | Promise<NodeAnswer>;

/** A node:http request listener, resolved once the answer is written. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface NodeIdempotencyOptions extends HttpIdempotencyOptions<IncomingMessage> {
  /**
   * Called with what a route threw (its client gets a 500 problem) and with a failure to write
   * the answer. @default console.error
   */
  onError?: (error: unknown, req: IncomingMessage) => void;
}

/** Bodies the binding read for the fingerprint, handed to the route by `ctx.body()`. */
const readBodies = new WeakMap<IncomingMessage, Promise<Uint8Array>>();

/**
 * The node:http binding: `idempotency(options)` wraps a route into a request listener that runs
 * it once per `Idempotency-Key` and answers every retry with the first answer. No WHATWG Request
 * or Response is built: the route gets node's `IncomingMessage` and answers a plain object.
 *
 * @example
 * const idempotent = idempotency({ store });
 * createServer(idempotent(async (req, ctx) => ({ status: 201, body: JSON.stringify({ ok: true }) })));
 */
export function idempotency(options: NodeIdempotencyOptions): (route: NodeRoute) => NodeListener {
  const caller = 'idempotency (@idemq/http/node)';
  new OptionsCheck(caller).fn('onError', options?.onError, true).done();
  const guard = createGuard(options, nodeFront, caller);
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  // A route's error reaches onError once, though it also rejects the guard when it passed through.
  const reported = new WeakSet<object>();
  const report = (error: unknown, req: IncomingMessage): void => {
    if (typeof error === 'object' && error !== null) {
      if (reported.has(error)) return;
      reported.add(error);
    }
    onError(error, req);
  };
  return (route) => {
    const next = async (req: IncomingMessage, ctx: HttpContext): Promise<NodeAnswer> => {
      try {
        const answer = await route(req, { ...ctx, body: () => bodyOf(req) });
        assertAnswerStatus(answer.status);
        return answer;
      } catch (error) {
        report(error, req);
        throw error;
      }
    };
    return async (req, res) => {
      let answer: NodeAnswer;
      try {
        answer = await guard(req, next);
      } catch (error) {
        // Only a request that passed through (or a broken answer) gets here: it still gets a 500.
        report(error, req);
        answer = problemAnswer('handler-failed', 'The route failed');
      }
      try {
        await writeAnswer(res, answer);
      } catch (error) {
        report(error, req);
        res.destroy();
      }
    };
  };
}

/** node:http's request, read without building a WHATWG Request. */
const nodeFront: HttpFront<IncomingMessage, NodeAnswer> = {
  method: (req) => req.method ?? 'GET',
  header: (req, name) => headerOf(req.headers, name),
  path: (req) => pathOf(req.url ?? '/'),
  target: (req) => req.url ?? '/',
  async readBody(req) {
    return { bytes: await bodyOf(req), forwarded: req };
  },
  ...nodeAnswers,
};

/** The request body, read once however often it is asked for. */
function bodyOf(req: IncomingMessage): Promise<Uint8Array> {
  let body = readBodies.get(req);
  if (body === undefined) {
    body = readRequestBody(req);
    readBodies.set(req, body);
  }
  return body;
}
