import type {
  Request as ExpressRequest,
  Response as ExpressResponse,
  NextFunction,
  RequestHandler,
} from 'express';
import { createGuard, type GuardNext } from '../guard.js';
import type { NodeAnswer } from '../node/nodeAnswer.js';
import { currentMethods } from '../node/responseMethods.js';
import type { HttpContext, HttpIdempotencyOptions } from '../types.js';
import { expressFront, type RoutePatterns } from './expressFront.js';
import { captureResponse } from './responseCapture.js';
import { writeResponse } from './writeResponse.js';

declare global {
  namespace Express {
    interface Request {
      /** The idempotent run this request is part of; set before the rest of the chain runs. */
      idempotency?: HttpContext;
    }
  }
}

/** The options of the Express binding: its hooks get the Express request (`req.user`, `req.get`). */
export type ExpressIdempotencyOptions = HttpIdempotencyOptions<ExpressRequest>;

/**
 * Express middleware (Express 5 and 4): a covered request runs the rest of the chain once per
 * `Idempotency-Key`; a retry gets the first response. What the route writes is captured, unsent,
 * stored, and sent once the record is settled. Mount it after your body parser (or with none),
 * app-wide or on a route — on a route, keys are scoped by the route pattern. The hooks
 * (`principal`, `fingerprint`, `route`) get the Express request.
 *
 * @example
 * app.use(express.json());
 * app.post('/payments', idempotency({ store }), (req, res) => { res.status(201).json(pay(req.body)); });
 */
export function idempotency(options: ExpressIdempotencyOptions): RequestHandler {
  const patterns: RoutePatterns = new WeakMap();
  const guard = createGuard(options, expressFront(patterns), 'idempotency (@idemq/http/express)');
  return function idempotencyMiddleware(req, res, next) {
    const pattern = routePattern(req, idempotencyMiddleware);
    if (pattern !== undefined) patterns.set(req, pattern);
    // Headers set before this middleware (CORS, request ids) belong on every answer.
    const baseline = { ...res.getHeaders() };
    let real = currentMethods(res);
    let nextCalled = false;

    const runChain: GuardNext<ExpressRequest, NodeAnswer> = (_req, ctx) => {
      if (nextCalled) return Promise.reject(new Error('the route runs once per request'));
      nextCalled = true;
      req.idempotency = ctx;
      const capture = captureResponse(res);
      real = capture.real;
      next();
      return capture.answer;
    };

    guard(req, runChain)
      .then((answer) => writeResponse(res, answer, baseline, real))
      .catch((error: unknown) => {
        // The app's error handling must reach the socket, not the capture.
        Object.assign(res, real);
        failed(error, res, next);
      });
  };
}

/**
 * The route pattern when the middleware is mounted on a route (`app.post(path, idempotency(…), …)`).
 * Express leaves `req.route` set by an earlier route that called `next()`, so the route counts
 * only if this middleware is in its stack.
 */
function routePattern(req: ExpressRequest, middleware: RequestHandler): string | undefined {
  const route = req.route as { path?: unknown; stack?: unknown } | undefined;
  if (typeof route?.path !== 'string' || !Array.isArray(route.stack)) return undefined;
  const mounted = route.stack.some(
    (layer: unknown) => (layer as { handle?: unknown } | null)?.handle === middleware,
  );
  return mounted ? `${req.baseUrl}${route.path}` : undefined;
}

function failed(error: unknown, res: ExpressResponse, next: NextFunction): void {
  if (res.headersSent) {
    res.destroy(error instanceof Error ? error : undefined);
    return;
  }
  next(error);
}
