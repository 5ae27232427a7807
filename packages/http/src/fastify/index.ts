import type { FastifyPluginAsync } from 'fastify';
import { bindFastify, type FastifyIdempotencyOptions } from './fastifyBinding.js';

export type { FastifyIdempotencyOptions } from './fastifyBinding.js';

async function register(
  fastify: Parameters<FastifyPluginAsync<FastifyIdempotencyOptions>>[0],
  options: FastifyIdempotencyOptions,
): Promise<void> {
  bindFastify(options)(fastify);
}

/**
 * Fastify 5 plugin: a covered request runs its route once per `Idempotency-Key`; a retry gets
 * the first response. Its hooks apply to the scope it is registered in (like a `fastify-plugin`
 * plugin): register it at the root for the whole app, or inside a plugin for that plugin's routes.
 * Keys are scoped by the route pattern (`request.routeOptions.url`); the hooks (`principal`,
 * `fingerprint`, `route`) get the Fastify request.
 *
 * @example
 * await app.register(idempotencyPlugin, { store });
 * app.post('/payments', async (request) => pay(request.body, request.idempotency?.fencingToken));
 */
export const idempotencyPlugin: FastifyPluginAsync<FastifyIdempotencyOptions> = Object.assign(
  register,
  {
    // What fastify-plugin sets: no encapsulation, so the hooks reach the registering scope's routes.
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: '@idemq/http',
  },
);
