import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import type { HttpHarness } from './harness.js';
import { expectProblem, type HttpEnv, REPLAYED, RouteCounter, send } from './httpEnv.js';

/** H09, H14: a failing route and a store that cannot be reached. */
export function registerFailureCases(suite: Suite<HttpEnv, HttpHarness>): void {
  const { harness } = suite;

  suite.case(
    'H09',
    'a 5xx answer and a thrown route are not stored: each retry runs the route again (attempt + 1, higher fencing token) until a 2xx is stored and replayed',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(async (_request, ctx) => {
        counter.start(ctx);
        if (counter.runs === 1) return new Response('busy', { status: 503 });
        if (counter.runs === 2) throw new Error('route failed');
        return Response.json({ run: counter.runs }, { status: 201 });
      });
      const key = env.key();
      const unavailable = await send(url, key);
      expect(unavailable.status, 'the 5xx goes to its client').toBe(503);
      expect(await unavailable.text()).toBe('busy');
      const thrown = await send(url, key);
      expect(thrown.status, 'a thrown route answers 500').toBe(500);
      expect(thrown.headers.get(REPLAYED)).toBeNull();
      await thrown.arrayBuffer();
      const stored = await send(url, key);
      expect(stored.status).toBe(201);
      expect(stored.headers.get(REPLAYED)).toBeNull();
      expect(await stored.json()).toEqual({ run: 3 });
      const replay = await send(url, key);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(await replay.json()).toEqual({ run: 3 });

      expect(counter.runs).toBe(3);
      expect(counter.contexts.map((c) => c.attempt)).toEqual([1, 2, 3]);
      const tokens = counter.contexts.map((c) => c.fencingToken ?? Number.NaN);
      expect(tokens[1], 'fencing token rises').toBeGreaterThan(tokens[0] ?? Number.NaN);
      expect(tokens[2], 'fencing token rises').toBeGreaterThan(tokens[1] ?? Number.NaN);
    },
  );

  const createUnreachable = harness.createUnreachableStore;
  suite.caseUnless(
    createUnreachable
      ? undefined
      : 'the harness has no createUnreachableStore() (an in-process store cannot be down)',
    'H14',
    "store down: 503 problem with Retry-After and the route does not run; `onStoreError: 'process'` runs it unprotected",
    async (env) => {
      if (!createUnreachable) throw new Error('unreachable');
      const counter = new RouteCounter();
      const route = async (_request: Request, ctx: Parameters<RouteCounter['start']>[0]) => {
        counter.start(ctx);
        return Response.json({ ok: true }, { status: 201 });
      };
      const down = await createUnreachable.call(harness);
      env.defer('unreachable store', () => down.close());
      const url = await env.serve(route, { store: down });
      const refused = await send(url, env.key());
      const retryAfter = refused.headers.get('retry-after');
      await expectProblem(refused, 503, 'store-unavailable', 'store down');
      expect(retryAfter, 'Retry-After: whole seconds, at least 1').toMatch(/^[1-9]\d*$/);
      expect(counter.runs, 'the route ran without its record').toBe(0);

      const downToo = await createUnreachable.call(harness);
      env.defer('unreachable store', () => downToo.close());
      const processing = await env.serve(route, { store: downToo, onStoreError: 'process' });
      const ran = await send(processing, env.key());
      expect(ran.status).toBe(201);
      await ran.arrayBuffer();
      expect(counter.runs).toBe(1);
    },
  );
}
