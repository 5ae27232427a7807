import { fileURLToPath } from 'node:url';
import type { ServerInterceptor } from '@grpc/grpc-js';
import { forkServerProcess } from '@idemq/conformance';
import type { GrpcHarness, GrpcProcess, GrpcProcessSetup } from '@idemq/conformance/grpc';
import { type Store, uuidv7 } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { freePort } from '@idemq/services';
import {
  type GrpcIdempotencyOptions,
  idempotencyContext,
  idempotencyInterceptor,
} from '../src/index.js';
import { serve } from './grpcServer.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROCESS_ENTRY = fileURLToPath(new URL('conformanceProcess.mjs', import.meta.url));

export type StoreKind = 'memory' | 'redis';

/** The interceptors a harness serves with: the real one, or a broken chain for the controls. */
export type MakeInterceptors = (options: GrpcIdempotencyOptions) => ServerInterceptor[];

/** A Redis store with a key prefix of its own, so that runs never meet. */
function redis(prefix = `idemq-grpc-conformance-${uuidv7()}`): Store {
  return redisStore({ url: REDIS_URL, prefix });
}

/** The grpc-js interceptor on the memory store, or on Redis (down store and processes too). */
export function interceptorHarness(
  kind: StoreKind,
  make: MakeInterceptors = (options) => [idempotencyInterceptor(options)],
): GrpcHarness {
  return {
    name: `grpc-js interceptor (${kind} store)`,
    start: ({ options, service, implementation }) => serve(service, implementation, make(options)),
    context: (call) => idempotencyContext(call),
    ...(kind === 'redis'
      ? {
          createStore: async () => redis(),
          createUnreachableStore: async () =>
            redisStore({ url: `redis://127.0.0.1:${await freePort()}`, commandTimeoutMs: 300 }),
          startProcess,
        }
      : {}),
  };
}

/**
 * Forks conformanceProcess.mjs (the built package) on Redis with a prefix shared by every
 * process of one scope, as instances of one service share their store.
 */
async function startProcess(setup: GrpcProcessSetup): Promise<GrpcProcess> {
  const config = {
    redisUrl: REDIS_URL,
    prefix: `idemq-grpc-conformance-${setup.options.scope}`,
    options: setup.options,
    implementation: setup.implementation,
  };
  const server = await forkServerProcess<{ address: string }>(PROCESS_ENTRY, config);
  return { address: server.ready.address, kill: server.kill, close: server.close };
}
