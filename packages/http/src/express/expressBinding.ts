import type {
  Request as ExpressRequest,
  Response as ExpressResponse,
  NextFunction,
  RequestHandler,
} from 'express';
import type { RouteTable } from '../bindingRoutes.js';
import type { HttpContext, HttpIdempotency, HttpNext } from '../types.js';
import { captureResponse, currentMethods } from './responseCapture.js';
import { toWebRequest } from './toWebRequest.js';
import { writeResponse } from './writeResponse.js';

declare global {
  namespace Express {
    interface Request {
      /** The idempotent run this request is part of; set before the rest of the chain runs. */
      idempotency?: HttpContext;
    }
  }
}

/**
 * Express middleware around a centre: the centre sees the request as a WHATWG Request; its
 * `next` runs the rest of the Express chain and captures what the route writes, unsent; the
 * Response the centre returns is what goes to the client.
 */
export function bindExpress(centre: HttpIdempotency, routes?: RouteTable): RequestHandler {
  return function idempotencyMiddleware(req, res, next) {
    const web = toWebRequest(req);
    if (web === undefined) {
      next();
      return;
    }
    const pattern = routePattern(req, idempotencyMiddleware);
    if (routes !== undefined && pattern !== undefined) routes.remember(web.request, pattern);
    // Headers set before this middleware (CORS, request ids) belong on every answer.
    const baseline = { ...res.getHeaders() };
    let real = currentMethods(res);
    let nextCalled = false;

    const runChain: HttpNext = (_request, ctx) => {
      if (nextCalled) return Promise.reject(new Error('the route runs once per request'));
      nextCalled = true;
      const raw = web.rawBody();
      if (raw !== undefined && req.body === undefined) req.body = raw;
      req.idempotency = ctx;
      const capture = captureResponse(res);
      real = capture.real;
      next();
      return capture.response;
    };

    centre
      .handle(web.request, runChain)
      .then((response) => writeResponse(res, response, baseline, real))
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
