import { status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { gate } from '../wait.js';
import { ChargeCounter, call, type GrpcEnv, REPLAYED, retryInfoDelayMs, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';

/** Two leases far enough apart that their advised delays must differ. */
const LEASES_MS = [2_000, 4_000] as const;
const CONCURRENT = 100;

/** G02–G04: a key whose first call still runs. */
export function registerInProgressCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  suite.case(
    'G02',
    'ABORTED, Trailers-Only, while the first call runs, with google.rpc.RetryInfo, retry-after-ms and grpc-retry-pushback-ms from the lease time left (two leases, two values); then the replay',
    async (env) => {
      const advised: number[] = [];
      for (const leaseMs of LEASES_MS) {
        const held = gate();
        const counter = new ChargeCounter();
        const address = await env.serve(
          (grpcCall, callback) => {
            counter.start(env.context(grpcCall));
            held.promise.then(() =>
              callback(null, {
                charge_id: `lease-${leaseMs}`,
                amount: 1,
                receipt: new Uint8Array(),
              }),
            );
          },
          { leaseMs, inProgressRetryMaxDelayMs: 60_000 },
        );
        const client = env.client(address);
        const key = env.key();
        const sentAt = performance.now();
        const first = call(client, key);
        await counter.started();
        const busy = await call(client, key);
        const elapsedMs = performance.now() - sentAt;
        expect(busy.code, busy.details).toBe(status.ABORTED);
        expect(busy.initial, 'Trailers-Only: no initial metadata').toBeUndefined();
        const delayMs = retryInfoDelayMs(busy.trailers);
        expect(delayMs, 'RetryInfo in grpc-status-details-bin').toBeDefined();
        expect(text(busy.trailers, 'retry-after-ms')).toBe(String(delayMs));
        expect(text(busy.trailers, 'grpc-retry-pushback-ms')).toBe(String(delayMs));
        // The claim happened after sentAt, so at least leaseMs - elapsed was left.
        expect(delayMs).toBeGreaterThanOrEqual(Math.floor(leaseMs - elapsedMs));
        expect(delayMs).toBeLessThanOrEqual(leaseMs);
        advised.push(delayMs ?? 0);

        held.open();
        const answer = await first;
        expect(answer.code).toBe(status.OK);
        expect(text(answer.initial, REPLAYED)).toBeUndefined();
        const replay = await call(client, key);
        expect(text(replay.initial, REPLAYED)).toBe('true');
        expect(replay.reply?.charge_id).toBe(`lease-${leaseMs}`);
        expect(counter.runs).toBe(1);
      }
      expect(advised[1], 'a longer lease advises a longer delay').toBeGreaterThan(
        (advised[0] ?? Number.POSITIVE_INFINITY) + 1_000,
      );
    },
  );

  suite.case(
    'G03',
    `${CONCURRENT} concurrent calls with one key: the handler runs once; every other answer is ABORTED or the replay`,
    async (env) => {
      const counter = new ChargeCounter();
      const address = await env.serve((grpcCall, callback) => {
        counter.start(env.context(grpcCall));
        setTimeout(
          () => callback(null, { charge_id: 'once', amount: 5, receipt: Uint8Array.of(9, 0, 9) }),
          150,
        );
      });
      const client = env.client(address);
      const key = env.key();
      const results = await Promise.all(
        Array.from({ length: CONCURRENT }, () => call(client, key)),
      );
      let firsts = 0;
      let aborted = 0;
      let replays = 0;
      const firstBytes = results.find((r) => r.code === status.OK)?.bytes;
      for (const result of results) {
        if (result.code === status.ABORTED) {
          aborted += 1;
          expect(text(result.trailers, 'retry-after-ms')).toMatch(/^[1-9]\d*$/);
          continue;
        }
        expect(result.code, `an answer other than ABORTED or the reply: ${result.details}`).toBe(
          status.OK,
        );
        expect(result.bytes).toEqual(firstBytes);
        if (text(result.initial, REPLAYED) === 'true') replays += 1;
        else firsts += 1;
      }
      expect(counter.runs, 'handler runs').toBe(1);
      expect(firsts, 'unmarked (first) answers').toBe(1);
      expect(firsts + aborted + replays).toBe(CONCURRENT);
      const after = await call(client, key);
      expect(text(after.initial, REPLAYED)).toBe('true');
      expect(counter.runs).toBe(1);
    },
  );

  suite.case(
    'G04',
    'a grpc-js client whose retry policy retries ABORTED waits the advised pushback and gets the first call’s reply; the handler ran once',
    async (env) => {
      const counter = new ChargeCounter();
      const held = gate();
      const address = await env.serve(
        (grpcCall, callback) => {
          counter.start(env.context(grpcCall));
          held.promise.then(() =>
            callback(null, { charge_id: 'slow', amount: 1, receipt: new Uint8Array() }),
          );
        },
        { leaseMs: 1_500 },
      );
      const key = env.key();
      const first = call(env.client(address), key);
      await counter.started();
      const retrying = env.client(address, {
        'grpc.service_config': JSON.stringify({
          methodConfig: [
            {
              name: [{ service: 'idemq.conformance.Payments' }],
              retryPolicy: {
                maxAttempts: 5,
                initialBackoff: '0.05s',
                maxBackoff: '0.1s',
                backoffMultiplier: 2,
                retryableStatusCodes: ['ABORTED'],
              },
            },
          ],
        }),
      });
      const sentAt = performance.now();
      const retried = call(retrying, key);
      setTimeout(() => held.open(), 600);
      const answer = await retried;
      const tookMs = performance.now() - sentAt;
      expect(answer.code, answer.details).toBe(status.OK);
      expect(answer.reply?.charge_id).toBe('slow');
      expect(text(answer.initial, REPLAYED)).toBe('true');
      // Without the pushback, grpc-js's own backoff (≤ 0.1 s, 4 retries) gives up before 0.6 s.
      expect(tookMs, 'waited the advised delay (the lease left)').toBeGreaterThan(1_000);
      expect((await first).code).toBe(status.OK);
      expect(counter.runs).toBe(1);
    },
  );
}
