import { expect } from 'vitest';
import type { Suite } from '../suite.js';
import { gate } from '../wait.js';
import type { HttpHarness } from './harness.js';
import { bytesOf, expectProblem, type HttpEnv, REPLAYED, RouteCounter, send } from './httpEnv.js';

/** Two leases far enough apart that their Retry-After (whole seconds) must differ. */
const LEASES_MS = [2_000, 4_000] as const;
const CONCURRENT = 100;

/** H02, H07: a key whose first request still runs. */
export function registerInProgressCases(suite: Suite<HttpEnv, HttpHarness>): void {
  suite.case(
    'H02',
    '409 + Retry-After while the first request runs, from the time left on the lease (two leases, two values); then the replay',
    async (env) => {
      const advised: number[] = [];
      for (const leaseMs of LEASES_MS) {
        const held = gate();
        const counter = new RouteCounter();
        const url = await env.serve(
          async (_request, ctx) => {
            counter.start(ctx);
            await held.promise;
            return Response.json({ leaseMs }, { status: 201 });
          },
          { leaseMs, inProgressRetryMaxDelayMs: 60_000 },
        );
        const key = env.key();
        const sentAt = performance.now();
        const first = send(url, key);
        // Handled here too: a case that fails before awaiting it leaves no unhandled rejection.
        first.catch(() => undefined);
        await counter.started();
        const busy = await send(url, key);
        const elapsedMs = performance.now() - sentAt;
        const retryAfter = busy.headers.get('retry-after');
        await expectProblem(busy, 409, 'in-progress', `lease ${leaseMs} ms`);
        expect(retryAfter, 'Retry-After: whole seconds').toMatch(/^\d+$/);
        const seconds = Number(retryAfter);
        // The claim happened after sentAt, so at least leaseMs - elapsed was left.
        expect(seconds, `lease ${leaseMs} ms`).toBeGreaterThanOrEqual(
          Math.max(1, Math.floor((leaseMs - elapsedMs) / 1000)),
        );
        expect(seconds, `lease ${leaseMs} ms`).toBeLessThanOrEqual(Math.ceil(leaseMs / 1000));
        advised.push(seconds);

        held.open();
        const answer = await first;
        expect(answer.status).toBe(201);
        expect(answer.headers.get(REPLAYED)).toBeNull();
        await answer.arrayBuffer();
        const replay = await send(url, key);
        expect(replay.status).toBe(201);
        expect(replay.headers.get(REPLAYED)).toBe('true');
        expect(await replay.json()).toEqual({ leaseMs });
        expect(counter.runs).toBe(1);
      }
      expect(advised[1], 'a longer lease advises a longer Retry-After').toBeGreaterThan(
        advised[0] ?? Number.POSITIVE_INFINITY,
      );
    },
  );

  suite.case(
    'H07',
    `${CONCURRENT} concurrent requests with one key: the route runs once; every other answer is 409 or the replay`,
    async (env) => {
      const counter = new RouteCounter();
      const body = new Uint8Array(64).map((_, i) => 255 - i);
      const url = await env.serve(async (_request, ctx) => {
        counter.start(ctx);
        await new Promise((resolve) => setTimeout(resolve, 150));
        return new Response(body, {
          status: 201,
          headers: { 'content-type': 'application/octet-stream' },
        });
      });
      const key = env.key();
      const responses = await Promise.all(Array.from({ length: CONCURRENT }, () => send(url, key)));
      let firsts = 0;
      let conflicts = 0;
      let replays = 0;
      for (const response of responses) {
        const bytes = await bytesOf(response);
        if (response.status === 409) {
          conflicts += 1;
          expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
          continue;
        }
        expect(response.status, `an answer other than 409 or the response`).toBe(201);
        expect(bytes).toEqual(body);
        if (response.headers.get(REPLAYED) === 'true') replays += 1;
        else firsts += 1;
      }
      expect(counter.runs, 'route runs').toBe(1);
      expect(firsts, 'unmarked (first) responses').toBe(1);
      expect(firsts + conflicts + replays).toBe(CONCURRENT);
      const after = await send(url, key);
      expect(after.headers.get(REPLAYED)).toBe('true');
      expect(await bytesOf(after)).toEqual(body);
      expect(counter.runs).toBe(1);
    },
  );
}
