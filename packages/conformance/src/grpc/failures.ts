import { Metadata, status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { ChargeCounter, call, type GrpcEnv, REPLAYED, retryInfoDelayMs, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';

/** G08, G11: handler errors by status code, and a store that cannot be reached. */
export function registerFailureCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  const { harness } = suite;

  suite.case(
    'G08',
    'a handler error is stored by its code: UNAVAILABLE and a thrown error are not (each retry runs again, attempt + 1, higher fencing token); INVALID_ARGUMENT is stored and replayed with its details and trailers',
    async (env) => {
      const counter = new ChargeCounter();
      const address = await env.serve(
        (grpcCall, callback) => {
          counter.start(env.context(grpcCall));
          if (counter.runs === 1) {
            callback({ code: status.UNAVAILABLE, details: 'ledger busy' });
          } else if (counter.runs === 2) {
            throw new Error('handler crashed');
          } else {
            const trailers = new Metadata();
            trailers.set('x-reason', 'amount-too-large');
            callback({
              code: status.INVALID_ARGUMENT,
              details: 'amount over limit',
              metadata: trailers,
            });
          }
        },
        { replayMetadata: ['x-reason'] },
      );
      const client = env.client(address);
      const key = env.key();
      const unavailable = await call(client, key);
      expect(unavailable.code, 'the handler’s status reaches its client').toBe(status.UNAVAILABLE);
      expect(unavailable.details).toBe('ledger busy');
      const thrown = await call(client, key);
      expect(thrown.code, 'a thrown handler').toBe(status.UNKNOWN);
      const invalid = await call(client, key);
      expect(invalid.code).toBe(status.INVALID_ARGUMENT);
      expect(text(invalid.trailers, REPLAYED)).toBeUndefined();
      for (let i = 0; i < 2; i += 1) {
        const replay = await call(client, key);
        expect(replay.code).toBe(status.INVALID_ARGUMENT);
        expect(replay.details).toBe('amount over limit');
        expect(text(replay.trailers, REPLAYED)).toBe('true');
        expect(text(replay.trailers, 'x-reason')).toBe('amount-too-large');
      }
      expect(counter.runs, 'handler runs').toBe(3);
      expect(counter.contexts.map((c) => c?.attempt)).toEqual([1, 2, 3]);
      const tokens = counter.contexts.map((c) => c?.fencingToken ?? Number.NaN);
      expect(tokens[1], 'fencing token rises').toBeGreaterThan(tokens[0] ?? Number.NaN);
      expect(tokens[2], 'fencing token rises').toBeGreaterThan(tokens[1] ?? Number.NaN);
    },
  );

  const createUnreachable = harness.createUnreachableStore;
  suite.caseUnless(
    createUnreachable
      ? undefined
      : 'the harness has no createUnreachableStore() (an in-process store cannot be down)',
    'G11',
    "store down: UNAVAILABLE, Trailers-Only, with RetryInfo, and the handler does not run; `onStoreError: 'process'` runs it unguarded",
    async (env) => {
      if (!createUnreachable) throw new Error('unreachable');
      const counter = new ChargeCounter();
      const charge = (
        grpcCall: Parameters<Parameters<GrpcEnv['serve']>[0]>[0],
        callback: Parameters<Parameters<GrpcEnv['serve']>[0]>[1],
      ) => {
        counter.start(env.context(grpcCall));
        callback(null, { charge_id: 'ran', amount: 1, receipt: new Uint8Array() });
      };
      const down = await createUnreachable.call(harness);
      env.defer('unreachable store', () => down.close());
      const refused = await call(env.client(await env.serve(charge, { store: down })), env.key());
      expect(refused.code, refused.details).toBe(status.UNAVAILABLE);
      expect(refused.initial, 'Trailers-Only').toBeUndefined();
      expect(retryInfoDelayMs(refused.trailers)).toBeGreaterThan(0);
      expect(text(refused.trailers, 'retry-after-ms')).toMatch(/^[1-9]\d*$/);
      expect(counter.runs, 'the handler ran without its record').toBe(0);

      const downToo = await createUnreachable.call(harness);
      env.defer('unreachable store', () => downToo.close());
      const processing = env.client(
        await env.serve(charge, { store: downToo, onStoreError: 'process' }),
      );
      const ran = await call(processing, env.key());
      expect(ran.code).toBe(status.OK);
      expect(counter.runs).toBe(1);
    },
  );
}
