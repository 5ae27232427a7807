import type { Context, MiddlewareHandler } from 'hono';
import { createHttpIdempotency } from '../createHttpIdempotency.js';
import type { HttpContext, HttpIdempotencyOptions } from '../types.js';

/** The Hono variables the middleware sets: `c.get('idempotency')` in the route. */
export interface IdempotencyEnv {
  Variables: { idempotency: HttpContext };
}

/**
 * Hono middleware: the route runs once per `Idempotency-Key`, retries get its first response.
 * The default route is the pattern Hono matched (`/orders/:id`), not the path. The route reads
 * the key, fencing token and lease signal as `c.get('idempotency')`.
 *
 * @example
 * app.post('/orders', idempotency({ store }), (c) => c.json({ id: 1 }, 201));
 */
export function idempotency(options: HttpIdempotencyOptions): MiddlewareHandler<IdempotencyEnv> {
  const byRequest = new WeakMap<Request, Context<IdempotencyEnv>>();
  const centre = createHttpIdempotency({
    ...options,
    route:
      options.route ??
      ((request) => {
        const c = byRequest.get(request);
        return c ? matchedRoutePattern(c) : new URL(request.url).pathname;
      }),
  });
  return async (c, next) => {
    byRequest.set(c.req.raw, c);
    const response = await centre.handle(c.req.raw, async (request, ctx: HttpContext) => {
      // The centre read the body for the fingerprint; the route reads the rebuilt request.
      c.req.raw = request;
      c.set('idempotency', ctx);
      await next();
      return c.res;
    });
    // After next() Hono ignores a returned Response: replace c.res instead.
    c.res = undefined;
    c.res = response;
  };
}

/** The pattern of the handler that answers: the last matched route that is not `use()`'s. */
function matchedRoutePattern(c: Context<IdempotencyEnv>): string {
  const routes = c.req.matchedRoutes;
  for (let i = routes.length - 1; i >= 0; i -= 1) {
    const route = routes[i];
    if (route && route.method !== 'ALL') return route.path;
  }
  return routes.at(-1)?.path ?? c.req.path;
}
