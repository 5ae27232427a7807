import { Metadata, status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { ChargeCounter, call, type GrpcEnv, REPLAYED, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';

/** G01: a completed key replays its first answer. */
export function registerReplayCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  suite.case(
    'G01',
    'a retry of a completed call gets the stored reply with identical bytes, idempotent-replayed: true in its initial metadata and the allow-listed metadata and trailers only; the handler ran once',
    async (env) => {
      const counter = new ChargeCounter();
      const receipt = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) % 256);
      const address = await env.serve(
        (grpcCall, callback) => {
          counter.start(env.context(grpcCall));
          const initial = new Metadata();
          initial.set('x-region', 'eu-west');
          initial.set('x-internal', 'server-7');
          grpcCall.sendMetadata(initial);
          const trailers = new Metadata();
          trailers.set('x-charge-id', `ch-${counter.runs}`);
          trailers.set('x-debug', 'secret');
          callback(
            null,
            { charge_id: `ch-${counter.runs}`, amount: grpcCall.request.amount, receipt },
            trailers,
          );
        },
        { replayMetadata: ['x-region', 'x-charge-id'] },
      );
      const client = env.client(address);
      const key = env.key();
      const first = await call(client, key, {
        account: 'a',
        amount: 42,
        note: Uint8Array.of(0, 255),
      });
      expect(first.code, first.details).toBe(status.OK);
      expect(first.reply?.charge_id).toBe('ch-1');
      expect(first.reply?.amount).toBe(42);
      expect(new Uint8Array(first.reply?.receipt ?? [])).toEqual(receipt);
      expect(text(first.initial, REPLAYED), 'the first answer is not marked').toBeUndefined();
      expect(text(first.initial, 'x-internal')).toBe('server-7');

      for (let retry = 0; retry < 2; retry += 1) {
        const replay = await call(client, key, {
          account: 'a',
          amount: 42,
          note: Uint8Array.of(0, 255),
        });
        expect(replay.code, replay.details).toBe(status.OK);
        expect(replay.bytes, 'reply bytes').toEqual(first.bytes);
        expect(text(replay.initial, REPLAYED)).toBe('true');
        expect(text(replay.initial, 'x-region'), 'allow-listed metadata').toBe('eu-west');
        expect(text(replay.trailers, 'x-charge-id'), 'allow-listed trailer').toBe('ch-1');
        expect(text(replay.initial, 'x-internal'), 'metadata off the list').toBeUndefined();
        expect(text(replay.trailers, 'x-debug'), 'trailer off the list').toBeUndefined();
      }
      expect(counter.runs, 'handler runs').toBe(1);
    },
  );
}
