import { Metadata, status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { type GrpcEnv, KEY, REPLAYED, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';
import { paymentsService } from './paymentsService.js';

/** G10: methods safe to retry, and streaming methods, are left alone. */
export function registerMethodCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  suite.case(
    'G10',
    'methods whose proto declares idempotency_level NO_SIDE_EFFECTS or IDEMPOTENT, and streaming methods, are untouched: no key needed, one key runs every time, nothing replayed',
    async (env) => {
      let balanceRuns = 0;
      const address = await env.serve((_call, callback) => {
        callback(null, { charge_id: 'x', amount: 1, receipt: new Uint8Array() });
      });
      const client = env.client(address);
      const service = paymentsService();
      const method = (name: string) => {
        const definition = service[name];
        if (!definition) throw new Error(`the suite's proto has no ${name}`);
        return definition;
      };
      const unary = (name: 'GetBalance' | 'SetLimit', key: string | undefined) =>
        new Promise<{ code: number; replayed: string | undefined }>((resolve) => {
          const definition = method(name);
          const metadata = new Metadata();
          if (key !== undefined) metadata.set(KEY, key);
          let replayed: string | undefined;
          const pending = client.makeUnaryRequest(
            definition.path,
            definition.requestSerialize,
            definition.responseDeserialize,
            { account: 'a', limit: 5 },
            metadata,
            () => undefined,
          );
          pending.on('metadata', (received: Metadata) => {
            replayed = text(received, REPLAYED);
          });
          pending.on('status', (ended) => {
            balanceRuns += ended.code === status.OK ? 1 : 0;
            resolve({ code: ended.code, replayed });
          });
        });
      const key = env.key();
      for (const name of ['GetBalance', 'SetLimit'] as const) {
        for (const sent of [undefined, key, key]) {
          const answer = await unary(name, sent);
          expect(answer.code, `${name} with key ${sent}`).toBe(status.OK);
          expect(answer.replayed, `${name} is never replayed`).toBeUndefined();
        }
      }
      expect(balanceRuns).toBe(6);

      const watch = method('WatchBalance');
      const metadata = new Metadata();
      metadata.set(KEY, key);
      const stream = client.makeServerStreamRequest(
        watch.path,
        watch.requestSerialize,
        watch.responseDeserialize,
        { account: 'a' },
        metadata,
      );
      const messages: unknown[] = [];
      const ended = await new Promise<number>((resolve) => {
        stream.on('data', (message: unknown) => messages.push(message));
        stream.on('status', (streamStatus: { code: number }) => resolve(streamStatus.code));
        stream.on('error', () => undefined);
      });
      expect(ended, 'a streaming method passes through').toBe(status.OK);
      expect(messages).toHaveLength(1);
    },
  );
}
