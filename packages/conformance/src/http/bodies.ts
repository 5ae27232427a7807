import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { gate } from '../wait.js';
import type { HttpHarness } from './harness.js';
import { bytesOf, type HttpEnv, REPLAYED, RouteCounter, send, within } from './httpEnv.js';

/** The stored-body limit the cases set: small, so that bodies over it stay small too. */
const LIMIT = 1_024;
const OMITTED = 'idempotent-body-omitted';

const pattern = (length: number, seed: number) =>
  new Uint8Array(length).map((_, i) => (i * 31 + seed) % 256);

/** H12, H13: bodies over `maxResponseBytes`, sent whole, replayed without body; never truncated. */
export function registerBodyCases(suite: Suite<HttpEnv, HttpHarness>): void {
  suite.case(
    'H12',
    'a body over maxResponseBytes: the first client gets it whole; the replay has status and headers, an empty body and Idempotent-Body-Omitted: too-large; at the limit it is replayed whole',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(
        async (request, ctx) => {
          counter.start(ctx);
          const { size } = (await request.json()) as { size: number };
          return new Response(pattern(size, size), {
            status: 201,
            headers: { 'content-type': 'application/octet-stream' },
          });
        },
        { maxResponseBytes: LIMIT },
      );
      const large = env.key();
      const body = JSON.stringify({ size: LIMIT * 4 });
      const first = await send(url, large, { body });
      expect(first.status).toBe(201);
      expect(first.headers.get(OMITTED)).toBeNull();
      expect(await bytesOf(first), 'the first client gets the whole body').toEqual(
        pattern(LIMIT * 4, LIMIT * 4),
      );
      const replay = await send(url, large, { body });
      expect(replay.status).toBe(201);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(replay.headers.get(OMITTED)).toBe('too-large');
      expect(replay.headers.get('content-type')).toBe('application/octet-stream');
      expect((await bytesOf(replay)).byteLength, 'never a truncated body').toBe(0);

      const atLimit = env.key();
      const limitBody = JSON.stringify({ size: LIMIT });
      await (await send(url, atLimit, { body: limitBody })).arrayBuffer();
      const whole = await send(url, atLimit, { body: limitBody });
      expect(whole.headers.get(REPLAYED)).toBe('true');
      expect(whole.headers.get(OMITTED)).toBeNull();
      expect(await bytesOf(whole)).toEqual(pattern(LIMIT, LIMIT));
      expect(counter.runs).toBe(2);
    },
  );

  suite.case(
    'H13',
    'a streamed body: past maxResponseBytes it flows to the client while the route still streams, and replays without body; a short stream replays byte-identical',
    async (env) => {
      const counter = new RouteCounter();
      const rest = gate();
      const chunk = pattern(512, 1);
      const url = await env.serve(
        async (request, ctx) => {
          counter.start(ctx);
          const { chunks } = (await request.json()) as { chunks: number };
          let sent = 0;
          const stream = new ReadableStream<Uint8Array>({
            async pull(controller) {
              // Past the limit, hold until the client proved it already got that much.
              if (sent * chunk.byteLength > LIMIT * 2) await rest.promise;
              if (sent === chunks) controller.close();
              else {
                sent += 1;
                controller.enqueue(chunk.slice());
              }
            },
          });
          return new Response(stream, {
            status: 200,
            headers: { 'content-type': 'application/octet-stream' },
          });
        },
        { maxResponseBytes: LIMIT },
      );
      const long = env.key();
      const longBody = JSON.stringify({ chunks: 12 });
      // A binding that buffers the body holds the head back too: bound that wait as well.
      const first = await within(
        send(url, long, { body: longBody }),
        env.timing.waitMs,
        'the head of the streamed response while the route holds the rest of its stream',
      ).catch((error: unknown) => {
        rest.open();
        throw error;
      });
      expect(first.status).toBe(200);
      const reader = first.body?.getReader();
      if (!reader) throw new Error('the first response has no body');
      let received = 0;
      const readPastLimit = async () => {
        while (received <= LIMIT * 2) {
          const { done, value } = await reader.read();
          if (done) break;
          received += value.byteLength;
        }
      };
      await within(
        readPastLimit(),
        env.timing.waitMs,
        'bytes past maxResponseBytes while the route holds the rest of its stream',
      ).finally(() => rest.open());
      expect(
        received,
        'bytes past the limit reach the client before the route ends',
      ).toBeGreaterThan(LIMIT * 2);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.byteLength;
      }
      expect(received, 'the whole stream').toBe(12 * chunk.byteLength);
      const replay = await send(url, long, { body: longBody });
      expect(replay.status).toBe(200);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(replay.headers.get(OMITTED)).toBe('too-large');
      expect((await bytesOf(replay)).byteLength).toBe(0);

      const short = env.key();
      const shortBody = JSON.stringify({ chunks: 1 });
      expect(await bytesOf(await send(url, short, { body: shortBody }))).toEqual(chunk);
      const shortReplay = await send(url, short, { body: shortBody });
      expect(shortReplay.headers.get(REPLAYED)).toBe('true');
      expect(shortReplay.headers.get(OMITTED)).toBeNull();
      expect(await bytesOf(shortReplay)).toEqual(chunk);
      expect(counter.runs).toBe(2);
    },
  );
}
