import type { IncomingMessage } from 'node:http';
import type { HttpRoute, HttpSuiteOptions } from '@idemq/conformance';
import type { ExpressIdempotencyOptions } from '../src/express/index.js';
import type { NodeContext, NodeIdempotencyOptions, NodeRoute } from '../src/node/index.js';
import type { HttpIdempotencyOptions } from '../src/types.js';

export function nodeRoute(route: HttpRoute): NodeRoute;
export function webRequest(req: IncomingMessage, ctx: NodeContext): Promise<Request>;
export function incomingOptions(options: HttpSuiteOptions): ExpressIdempotencyOptions;
export function incomingOptions<R>(
  options: HttpSuiteOptions,
  incoming: (request: R) => IncomingMessage,
): HttpIdempotencyOptions<R>;
export function nodeOptions(options: HttpSuiteOptions): NodeIdempotencyOptions;
