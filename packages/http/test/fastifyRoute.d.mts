import type { HttpRoute } from '@idemq/conformance/http-process';
import type { FastifyInstance } from 'fastify';

/** Mounts `route` at /r of `app` for GET, HEAD, POST, PUT, PATCH, DELETE; bodies as raw bytes. */
export declare function mountFastifyRoute(app: FastifyInstance, route: HttpRoute): void;
