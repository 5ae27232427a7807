import type { RequestHandler } from 'express';
import { createRouteTable } from '../bindingRoutes.js';
import { createHttpIdempotency, type HttpIdempotencyOptions } from '../index.js';
import { bindExpress } from './expressBinding.js';

export { bindExpress } from './expressBinding.js';

/**
 * Express middleware (Express 5 and 4): a covered request runs the rest of the chain once per
 * `Idempotency-Key`; a retry gets the first response. Mount it after your body parser (or with
 * none), app-wide or on a route — on a route, keys are scoped by the route pattern.
 *
 * @example
 * app.use(express.json());
 * app.post('/payments', idempotency({ store }), (req, res) => { res.status(201).json(pay(req.body)); });
 */
export function idempotency(options: HttpIdempotencyOptions): RequestHandler {
  const routes = createRouteTable();
  return bindExpress(
    createHttpIdempotency({ ...options, route: options.route ?? routes.routeOf }),
    routes,
  );
}
