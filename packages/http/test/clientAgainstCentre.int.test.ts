import type { Store } from '@idemq/core';
import { seededRandom } from '@idemq/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FetchFunction,
  type IdempotentFetchOptions,
  idempotentFetch,
  type RetryEvent,
} from '../src/client/index.js';
import { createHttpIdempotency, type HttpIdempotencyOptions } from '../src/index.js';
import { type Fault, type FaultyServer, serveWithFaults } from './faultyServer.js';
import { STORES } from './helpers.js';

const PAYMENTS = 150;
/** How often each fault hits an arrival of POST /payments. */
const FAULTS: Record<Exclude<Fault, 'none'>, number> = {
  unavailable: 0.08,
  dropBefore: 0.08,
  dropAfter: 0.1,
  dropWhileRunning: 0.05,
};
/** Share of route runs slower than the client's attempt timeout: retries meet them in flight. */
const SLOW_ROUTE_SHARE = 0.08;
const ATTEMPT_TIMEOUT_MS = 400;
const CLIENT: IdempotentFetchOptions = {
  attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
  maxAttempts: 40,
  baseDelayMs: 5,
  maxDelayMs: 40,
  // The centre's Retry-After is whole seconds; the cap keeps the waits of this test short.
  maxRetryAfterMs: 40,
};

interface Answer {
  order: number;
  status: number;
  replayed: boolean;
  body: string;
}

interface PaymentsRun {
  answers: Answer[];
  /** How many times the route ran for each order. */
  executions: Map<number, number>;
  /** The body of the first response the route made for each order. */
  firstBodies: Map<number, string>;
  /** The Idempotency-Key values each order's attempts carried. */
  keysOfOrder: Map<number, Set<string | null>>;
  retries: RetryEvent[];
  server: FaultyServer;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The real centre over node:http behind seeded fault injection, a payments route that records
 * each run and takes a random time, and `PAYMENTS` concurrent logical requests through
 * `idempotentFetch`.
 */
async function runPayments(options: {
  store: Store;
  seed: number;
  centre?: Partial<HttpIdempotencyOptions>;
  fetch?: FetchFunction;
}): Promise<PaymentsRun> {
  const executions = new Map<number, number>();
  const firstBodies = new Map<number, string>();
  const keysOfOrder = new Map<number, Set<string | null>>();
  const faultRandoms = new Map<number, () => number>();
  const routeRandoms = new Map<number, () => number>();
  const randomOf = (randoms: Map<number, () => number>, order: number, salt: number) => {
    let random = randoms.get(order);
    if (random === undefined) {
      random = seededRandom(options.seed * 100_003 + order * 7 + salt);
      randoms.set(order, random);
    }
    return random();
  };
  let charged = 0;

  const route = async (request: Request): Promise<Response> => {
    const { order } = (await request.json()) as { order: number };
    executions.set(order, (executions.get(order) ?? 0) + 1);
    const draw = randomOf(routeRandoms, order, 1);
    const slow = draw < SLOW_ROUTE_SHARE;
    const tookMs = slow ? ATTEMPT_TIMEOUT_MS + 50 + draw * 2_000 : 2 + draw * 40;
    await new Promise((resolve) => setTimeout(resolve, tookMs));
    charged += 1;
    const paymentId = `pay_${charged}`;
    const body = JSON.stringify({ paymentId, order });
    if (!firstBodies.has(order)) firstBodies.set(order, body);
    return new Response(body, {
      status: 201,
      headers: { 'content-type': 'application/json', location: `/payments/${paymentId}` },
    });
  };

  const chooseFault = async (request: Request): Promise<Fault> => {
    const { order } = (await request.json()) as { order: number };
    const keys = keysOfOrder.get(order) ?? new Set();
    keysOfOrder.set(order, keys.add(request.headers.get('idempotency-key')));
    const draw = randomOf(faultRandoms, order, 0);
    let band = 0;
    for (const [fault, share] of Object.entries(FAULTS) as [Fault, number][]) {
      band += share;
      if (draw < band) return fault;
    }
    return 'none';
  };

  const { store } = options;
  cleanups.push(() => store.close());
  const centre = createHttpIdempotency({ store, ttlMs: 60_000, ...options.centre });
  const server = await serveWithFaults((request) => centre.handle(request, route), chooseFault);
  cleanups.push(async () => {
    await server.settled();
    await server.close();
  });

  const retries: RetryEvent[] = [];
  const send = idempotentFetch({
    ...CLIENT,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    onRetry: (event) => retries.push(event),
  });
  const answers = await Promise.all(
    Array.from({ length: PAYMENTS }, async (_, order): Promise<Answer> => {
      try {
        const response = await send(`${server.url}/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ order, amount: 100 + order }),
        });
        return {
          order,
          status: response.status,
          replayed: response.headers.get('idempotent-replayed') === 'true',
          body: await response.text(),
        };
      } catch (error) {
        // Kept as an answer so that the checks name the order that got no response.
        return { order, status: 0, replayed: false, body: String(error) };
      }
    }),
  );
  await server.settled();
  return { answers, executions, firstBodies, keysOfOrder, retries, server };
}

/** Orders whose route did not run exactly once: the exactly-once checker. */
function notRunOnce(run: PaymentsRun): number[] {
  return Array.from({ length: PAYMENTS }, (_, order) => order).filter(
    (order) => run.executions.get(order) !== 1,
  );
}

describe.each(STORES)(
  'idempotentFetch against the real centre under faults ($name store)',
  ({ make }) => {
    it(`runs each of ${PAYMENTS} logical requests exactly once and resolves each with its first response`, async () => {
      const run = await runPayments({ store: make(), seed: 26 });
      const { answers, firstBodies, retries, server } = run;

      expect(notRunOnce(run)).toEqual([]);
      for (const answer of answers) {
        expect(answer.status, `order ${answer.order}`).toBe(201);
        expect(answer.body, `order ${answer.order}`).toBe(firstBodies.get(answer.order));
      }

      // One key per logical request, the same on all its attempts.
      for (let order = 0; order < PAYMENTS; order += 1) {
        expect(run.keysOfOrder.get(order)?.size, `order ${order}`).toBe(1);
      }
      const orderOfKey = new Map(
        [...run.keysOfOrder].map(([order, keys]) => [[...keys][0] ?? null, order]),
      );
      expect(orderOfKey.size).toBe(PAYMENTS);

      // Each first response the fault layer threw away once the route ran came back as a replay.
      const lostFirst = server.arrivals
        .filter((a) => a.fault.startsWith('drop') && a.status === 201 && a.replayed === false)
        .map((a) => orderOfKey.get(a.key));
      expect(lostFirst.length).toBeGreaterThan(0);
      for (const order of lostFirst) {
        expect(answers[order as number]?.replayed, `order ${order}`).toBe(true);
      }

      // The faults happened and the client met each kind.
      const count = (fault: Fault) => server.arrivals.filter((a) => a.fault === fault).length;
      for (const fault of Object.keys(FAULTS) as Fault[])
        expect(count(fault), fault).toBeGreaterThan(0);
      expect(server.arrivals.filter((a) => a.status === 409).length).toBeGreaterThan(0);
      expect(retries.some((e) => e.status === 409)).toBe(true);
      expect(retries.some((e) => e.status === 503)).toBe(true);
      expect(retries.some((e) => e.error !== undefined)).toBe(true);
      expect(server.arrivals.some((a) => a.replayed)).toBe(true);
    });
  },
);

describe('the exactly-once check of this harness', () => {
  it('fails when the key does not reach a centre that lets keyless requests through', async () => {
    // Deliberately broken: something between client and server drops the Idempotency-Key.
    const stripKey: FetchFunction = (input, init) => {
      const request = new Request(input, init);
      const headers = new Headers(request.headers);
      headers.delete('idempotency-key');
      return fetch(new Request(request, { headers }));
    };
    const run = await runPayments({
      store: STORES[0]!.make(),
      seed: 26,
      centre: { required: false },
      fetch: stripKey,
    });
    expect(run.keysOfOrder.get(0)).toEqual(new Set([null]));
    expect(notRunOnce(run).length).toBeGreaterThan(0);
    expect(run.answers.some((a) => a.body !== run.firstBodies.get(a.order))).toBe(true);
  });
});
