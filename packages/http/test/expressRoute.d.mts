import type { HttpRoute } from '@idemq/conformance/http-process';
import type { Express, RequestHandler } from 'express';

/** An Express app: `middleware` app-wide, `route` at /r for GET, HEAD, POST, PUT, PATCH, DELETE. */
export declare function expressApp(middleware: RequestHandler, route: HttpRoute): Express;
