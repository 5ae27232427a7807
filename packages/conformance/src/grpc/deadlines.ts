import { status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { waitUntil } from '../wait.js';
import { ChargeCounter, call, type GrpcEnv, REPLAYED, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';

const HANDLER_MS = 600;

/** G09: a client deadline does not end the record. */
export function registerDeadlineCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  suite.case(
    'G09',
    'a client deadline shorter than the handler: the client gets DEADLINE_EXCEEDED, the handler finishes and its outcome is recorded; the retry gets the replay and the handler ran once',
    async (env) => {
      const counter = new ChargeCounter();
      let finished = 0;
      const address = await env.serve((grpcCall, callback) => {
        counter.start(env.context(grpcCall));
        setTimeout(() => {
          finished += 1;
          callback(null, { charge_id: 'late', amount: 1, receipt: Uint8Array.of(1) });
        }, HANDLER_MS);
      });
      const client = env.client(address);
      const key = env.key();
      const expired = await call(client, key, undefined, { deadline: Date.now() + 150 });
      expect(expired.code, expired.details).toBe(status.DEADLINE_EXCEEDED);
      await waitUntil(async () => finished === 1, {
        timeoutMs: env.timing.waitMs,
        what: 'the handler to finish after the deadline',
      });
      // The record is written just after the handler answers: retry until it is no longer ABORTED.
      let retry = await call(client, key);
      for (let i = 0; i < 50 && retry.code === status.ABORTED; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        retry = await call(client, key);
      }
      expect(retry.code, retry.details).toBe(status.OK);
      expect(text(retry.initial, REPLAYED)).toBe('true');
      expect(retry.reply?.charge_id).toBe('late');
      expect(counter.runs, 'handler runs').toBe(1);
    },
  );
}
