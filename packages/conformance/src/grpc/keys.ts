import { status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { ChargeCounter, call, type GrpcEnv, REPLAYED, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';
import type { ChargeRequest } from './paymentsService.js';

/** G05–G07: keys reused, missing, malformed, and taken from the request. */
export function registerKeyCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  const counting = (env: GrpcEnv, counter: ChargeCounter) =>
    env.serve((grpcCall, callback) => {
      counter.start(env.context(grpcCall));
      callback(null, {
        charge_id: `run-${counter.runs}`,
        amount: grpcCall.request.amount,
        receipt: new Uint8Array(),
      });
    });

  suite.case(
    'G05',
    'one key with other request bytes: FAILED_PRECONDITION, Trailers-Only, the handler does not run; the first request still gets its replay',
    async (env) => {
      const counter = new ChargeCounter();
      const client = env.client(await counting(env, counter));
      const key = env.key();
      expect((await call(client, key, { account: 'a', amount: 10 })).code).toBe(status.OK);
      for (const other of [
        { account: 'a', amount: 11 },
        { account: 'b', amount: 10 },
        { account: 'a', amount: 10, note: Uint8Array.of(1) },
      ] satisfies ChargeRequest[]) {
        const reused = await call(client, key, other);
        expect(reused.code, JSON.stringify(other)).toBe(status.FAILED_PRECONDITION);
        expect(reused.initial, 'Trailers-Only').toBeUndefined();
      }
      const replay = await call(client, key, { account: 'a', amount: 10 });
      expect(text(replay.initial, REPLAYED)).toBe('true');
      expect(replay.reply?.charge_id).toBe('run-1');
      expect(counter.runs).toBe(1);
    },
  );

  suite.case(
    'G06',
    'a missing key is INVALID_ARGUMENT, and so is a malformed one (too long, two values, a space); with required: false a call without key runs unguarded every time',
    async (env) => {
      const counter = new ChargeCounter();
      const client = env.client(await counting(env, counter));
      const missing = await call(client, undefined);
      expect(missing.code, missing.details).toBe(status.INVALID_ARGUMENT);
      expect(missing.initial, 'Trailers-Only').toBeUndefined();
      for (const bad of ['k'.repeat(256), ['k-1', 'k-2'], 'two words']) {
        const refused = await call(client, bad);
        expect(refused.code, `key ${JSON.stringify(bad).slice(0, 40)}`).toBe(
          status.INVALID_ARGUMENT,
        );
      }
      expect(counter.runs, 'no refused call ran').toBe(0);
      expect((await call(client, 'k'.repeat(255))).code, 'a 255-character key').toBe(status.OK);

      const optional = new ChargeCounter();
      const unguarded = env.client(
        await env.serve(
          (grpcCall, callback) => {
            optional.start(env.context(grpcCall));
            callback(null, { charge_id: 'free', amount: 1, receipt: new Uint8Array() });
          },
          { required: false },
        ),
      );
      for (let i = 0; i < 2; i += 1) {
        const free = await call(unguarded, undefined);
        expect(free.code).toBe(status.OK);
        expect(text(free.initial, REPLAYED)).toBeUndefined();
      }
      expect(optional.runs).toBe(2);
      expect(optional.contexts, 'an unguarded call has no record').toEqual([undefined, undefined]);
    },
  );

  suite.case(
    'G07',
    'a key taken from the request (AIP-155 request_id) by the key option: the same request_id replays without any key metadata',
    async (env) => {
      const counter = new ChargeCounter();
      const address = await env.serve(
        (grpcCall, callback) => {
          counter.start(env.context(grpcCall));
          callback(null, {
            charge_id: `run-${counter.runs}`,
            amount: 1,
            receipt: new Uint8Array(),
          });
        },
        {
          key: (guarded) => {
            const id = (guarded.request as ChargeRequest).request_id;
            return id === '' ? undefined : id;
          },
        },
      );
      const client = env.client(address);
      const request = { request_id: env.key('request-id'), account: 'a', amount: 3 };
      expect((await call(client, undefined, request)).reply?.charge_id).toBe('run-1');
      const replay = await call(client, undefined, request);
      expect(text(replay.initial, REPLAYED)).toBe('true');
      expect(replay.reply?.charge_id).toBe('run-1');
      const other = await call(client, undefined, {
        ...request,
        request_id: env.key('request-id'),
      });
      expect(other.reply?.charge_id).toBe('run-2');
      const none = await call(client, undefined, { account: 'a', amount: 3 });
      expect(none.code, 'no request_id').toBe(status.INVALID_ARGUMENT);
      expect(counter.runs).toBe(2);
    },
  );
}
