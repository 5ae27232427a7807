import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import type { HttpHarness } from './harness.js';
import { expectProblem, type HttpEnv, REPLAYED, RouteCounter, send } from './httpEnv.js';

/** Keys a server must refuse with 400, and why. */
const MALFORMED_KEYS: ReadonlyArray<[string, string]> = [
  ['""', 'empty'],
  ['"abc', 'unterminated quoting'],
  ['x'.repeat(256), 'over 255 characters'],
  // A tab: the one control character HTTP clients let through in a header value.
  ['"a\tb"', 'a control character (tab)'],
  ['clé', 'a non-ASCII character'],
];

/** H04, H05, H06: which requests a key covers, and which keys are refused. */
export function registerKeyCases(suite: Suite<HttpEnv, HttpHarness>): void {
  suite.case(
    'H04',
    '422 when a key is reused for another request (another body, another method); the route does not run again and the first request still replays',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(async (_request, ctx) => {
        counter.start(ctx);
        return Response.json({ ok: true }, { status: 201 });
      });
      const key = env.key();
      expect((await send(url, key, { body: '{"amount":10}' })).status).toBe(201);
      await expectProblem(
        await send(url, key, { body: '{"amount":11}' }),
        422,
        'key-reuse',
        'another body',
      );
      await expectProblem(
        await send(url, key, { method: 'PATCH', body: '{"amount":10}' }),
        422,
        'key-reuse',
        'another method',
      );
      const replay = await send(url, key, { body: '{"amount":10}' });
      expect(replay.status).toBe(201);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(counter.runs).toBe(1);
    },
  );

  suite.case(
    'H05',
    '400 for a missing key (required) and for malformed keys (empty, bad quoting, too long, control or non-ASCII characters); the route never runs; optional mode passes keyless requests through',
    async (env) => {
      const counter = new RouteCounter();
      const route = async (_request: Request, ctx: Parameters<RouteCounter['start']>[0]) => {
        counter.start(ctx);
        return Response.json({ ok: true }, { status: 201 });
      };
      const url = await env.serve(route);
      await expectProblem(await send(url, undefined), 400, 'key-missing', 'no key');
      for (const [key, why] of MALFORMED_KEYS) {
        await expectProblem(await send(url, key), 400, 'key-malformed', why);
      }
      expect(counter.runs, 'the route ran for a refused key').toBe(0);

      const optional = await env.serve(route, { required: false });
      for (let i = 1; i <= 2; i += 1) {
        const response = await send(optional, undefined);
        expect(response.status, 'keyless request in optional mode').toBe(201);
        expect(response.headers.get(REPLAYED)).toBeNull();
        await response.arrayBuffer();
        expect(counter.runs).toBe(i);
      }
      expect(counter.contexts.map((c) => c.fencingToken)).toEqual([undefined, undefined]);
    },
  );

  suite.case(
    'H06',
    'methods not covered pass through untouched (GET, PUT, DELETE with a key run every time, unmarked); `methods` changes which are covered',
    async (env) => {
      const counter = new RouteCounter();
      const route = async (request: Request, ctx: Parameters<RouteCounter['start']>[0]) => {
        counter.start(ctx);
        return Response.json({ method: request.method, run: counter.runs }, { status: 200 });
      };
      const url = await env.serve(route);
      const key = env.key();
      for (const method of ['GET', 'GET', 'PUT', 'PUT', 'DELETE']) {
        const response = await send(url, key, { method });
        expect(response.status, method).toBe(200);
        expect(response.headers.get(REPLAYED), method).toBeNull();
        expect(await response.json()).toEqual({ method, run: counter.runs });
      }
      expect(counter.runs, 'every request passed through ran').toBe(5);
      expect(counter.contexts.every((c) => c.fencingToken === undefined)).toBe(true);

      const putOnly = await env.serve(route, { methods: ['PUT'] });
      const before = counter.runs;
      const put = await send(putOnly, key, { method: 'PUT' });
      expect(put.status).toBe(200);
      await put.arrayBuffer();
      const putAgain = await send(putOnly, key, { method: 'PUT' });
      expect(putAgain.headers.get(REPLAYED), 'PUT covered').toBe('true');
      await putAgain.arrayBuffer();
      const post = await send(putOnly, undefined);
      expect(post.status, 'POST not covered, no key needed').toBe(200);
      await post.arrayBuffer();
      expect(counter.runs - before).toBe(2);
    },
  );
}
