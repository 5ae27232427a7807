import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import type { HttpHarness } from './harness.js';
import { type HttpEnv, REPLAYED, RouteCounter, send } from './httpEnv.js';

/** H10: one tenant's key never replays another tenant's response. */
export function registerIsolationCases(suite: Suite<HttpEnv, HttpHarness>): void {
  suite.case(
    'H10',
    'tenant isolation: one key sent by two principals runs the route for each, and each replay is its own tenant response',
    async (env) => {
      const counter = new RouteCounter();
      const url = await env.serve(
        async (request, ctx) => {
          counter.start(ctx);
          return Response.json({ tenant: request.headers.get('x-tenant') }, { status: 201 });
        },
        { principal: (request) => request.headers.get('x-tenant') ?? undefined },
      );
      const key = env.key();
      const as = (tenant: string) => send(url, key, { headers: { 'x-tenant': tenant } });
      for (const tenant of ['acme', 'globex']) {
        const first = await as(tenant);
        expect(first.status).toBe(201);
        expect(first.headers.get(REPLAYED), `${tenant}: its first request`).toBeNull();
        expect(await first.json()).toEqual({ tenant });
      }
      for (const tenant of ['acme', 'globex']) {
        const replay = await as(tenant);
        expect(replay.headers.get(REPLAYED)).toBe('true');
        expect(await replay.json(), `${tenant} gets its own response`).toEqual({ tenant });
      }
      expect(counter.runs).toBe(2);
    },
  );
}
