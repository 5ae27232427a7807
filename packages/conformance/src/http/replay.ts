import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import type { HttpHarness } from './harness.js';
import { bytesOf, type HttpEnv, REPLAYED, RouteCounter, send } from './httpEnv.js';

/** Every byte value, twice: a body no text decoding leaves intact. */
const BINARY = new Uint8Array(512).map((_, i) => (i * 7 + 3) % 256);

/** H01, H03, H11: what a replay repeats, and when it is available. */
export function registerReplayCases(suite: Suite<HttpEnv, HttpHarness>): void {
  suite.case(
    'H01',
    'replay: the first status and body bytes (binary), Idempotent-Replayed on replays only, for the quoted and the bare key; the route ran once',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(async (_request, ctx) => {
        counter.start(ctx);
        return new Response(BINARY, {
          status: 201,
          headers: { 'content-type': 'application/octet-stream' },
        });
      });
      const key = env.key();
      const first = await send(url, `"${key}"`);
      expect(first.status).toBe(201);
      expect(first.headers.get(REPLAYED), 'the first response is not a replay').toBeNull();
      expect(await bytesOf(first)).toEqual(BINARY);

      for (const form of [`"${key}"`, key, `"${key}"`]) {
        const replay = await send(url, form);
        expect(replay.status, `replay with ${form}`).toBe(201);
        expect(replay.headers.get(REPLAYED), `replay with ${form}`).toBe('true');
        expect(replay.headers.get('content-type')).toBe('application/octet-stream');
        expect(await bytesOf(replay), `replay with ${form}: body bytes`).toEqual(BINARY);
      }
      expect(counter.runs, 'route runs').toBe(1);
      expect(counter.contexts[0]?.attempt).toBe(1);
      expect(counter.contexts[0]?.fencingToken).toEqual(expect.any(Number));
    },
  );

  suite.case(
    'H03',
    'the first response is sent once its record is COMPLETED: a retry sent as soon as it arrived is a replay, never a 409',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(async (_request, ctx) => {
        counter.start(ctx);
        return Response.json({ order: counter.runs }, { status: 201 });
      });
      for (let i = 0; i < 5; i += 1) {
        const key = env.key();
        const first = await send(url, key);
        const firstBody = await first.text();
        expect(first.status).toBe(201);
        const retry = await send(url, key);
        const retryBody = await retry.text();
        expect(retry.status, `retry right after the answer (${retryBody})`).toBe(201);
        expect(retry.headers.get(REPLAYED)).toBe('true');
        expect(retryBody).toBe(firstBody);
      }
      expect(counter.runs).toBe(5);
    },
  );

  suite.case(
    'H11',
    'header allow-list: a replay repeats content-type, location and a listed custom header, never set-cookie or an unlisted header',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(
        async (_request, ctx) => {
          counter.start(ctx);
          return new Response('{"id":1}', {
            status: 201,
            headers: {
              'content-type': 'application/json',
              location: '/orders/1',
              'set-cookie': 'session=secret',
              'x-order-ref': 'ref-1',
              'x-internal': 'not for replays',
            },
          });
        },
        { replayHeaders: ['x-order-ref'] },
      );
      const key = env.key();
      const first = await send(url, key);
      expect(first.status).toBe(201);
      expect(first.headers.get('set-cookie'), 'the first response keeps its cookie').toBe(
        'session=secret',
      );
      expect(first.headers.get('x-internal')).toBe('not for replays');
      await first.arrayBuffer();

      const replay = await send(url, key);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(replay.headers.get('content-type')).toBe('application/json');
      expect(replay.headers.get('location')).toBe('/orders/1');
      expect(replay.headers.get('x-order-ref'), 'a listed header is replayed').toBe('ref-1');
      expect(replay.headers.get('set-cookie'), 'set-cookie is never replayed').toBeNull();
      expect(replay.headers.get('x-internal'), 'an unlisted header is not replayed').toBeNull();
      expect(await replay.text()).toBe('{"id":1}');
      expect(counter.runs).toBe(1);
    },
  );
}
