import {
  collectHttpCases,
  describeFailedCases,
  failedCaseIds,
  runCollectedCases,
} from '@idemq/conformance';
import { describe, expect, it } from 'vitest';
import { createHttpIdempotency, type HttpIdempotency, type HttpNext } from '../src/index.js';
import { centreHarness, type MakeCentre, type StoreKind } from './conformanceHarnesses.js';

/*
 * Negative controls of the HTTP conformance suite: a checker is trusted only when broken
 * bindings fail it. The real centre passes every case through the same runner; then each broken
 * centre below must make the cases named for it fail.
 */

const CONCURRENCY = 4;

/** A centre made from `options` changed by `change`: a binding that passes the wrong options. */
const withOptions =
  (change: (options: Parameters<MakeCentre>[0]) => Parameters<MakeCentre>[0]): MakeCentre =>
  (options) =>
    createHttpIdempotency(change(options));

/** The response with its body read, so that it can be answered twice. */
async function copyable(response: Response): Promise<() => Response> {
  const bytes = await response.arrayBuffer();
  return () => new Response(bytes, response);
}

/** Answers the route's response at once and records the completion later. */
const answersBeforeCompletion: MakeCentre = (options) => {
  const centre = createHttpIdempotency(options);
  return {
    handle: (request, next) =>
      new Promise<Response>((resolve, reject) => {
        const early: HttpNext = async (req, ctx) => {
          const copy = await copyable(await next(req, ctx));
          resolve(copy());
          await new Promise((wait) => setTimeout(wait, 300));
          return copy();
        };
        centre.handle(request, early).then(resolve, reject);
      }),
  };
};

/** Advises `Retry-After: 1` on every 409, whatever the lease has left. */
const constantRetryAfter: MakeCentre = (options) => {
  const centre = createHttpIdempotency(options);
  return {
    handle: async (request, next) => {
      const response = await centre.handle(request, next);
      if (response.status !== 409) return response;
      const headers = new Headers(response.headers);
      headers.set('retry-after', '1');
      return new Response(response.body, { status: 409, headers });
    },
  };
};

/** Runs the route first, then asks the record: every request runs it. */
const runsBeforeClaiming: MakeCentre = (options): HttpIdempotency => {
  const centre = createHttpIdempotency(options);
  return {
    handle: async (request, next) => {
      const signal = new AbortController().signal;
      const ctx = {
        idempotencyKey: undefined,
        fencingToken: undefined,
        attempt: undefined,
        signal,
      };
      const copy = await copyable(await next(request.clone(), ctx));
      return centre.handle(request, async () => copy());
    },
  };
};

const controls: Array<{ broken: string; kind: StoreKind; make: MakeCentre; caughtBy: string[] }> = [
  {
    broken: 'answers the first response before its record is COMPLETED',
    kind: 'memory',
    make: answersBeforeCompletion,
    caughtBy: ['H03'],
  },
  {
    broken: 'advises a constant Retry-After on 409',
    kind: 'memory',
    make: constantRetryAfter,
    caughtBy: ['H02'],
  },
  {
    broken: 'runs the route before claiming the key',
    kind: 'memory',
    make: runsBeforeClaiming,
    caughtBy: ['H01', 'H02', 'H03', 'H04', 'H05', 'H06', 'H07', 'H09', 'H10', 'H11', 'H12', 'H13'],
  },
  {
    broken: 'fingerprints every request alike',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, fingerprint: () => 'same' })),
    caughtBy: ['H04'],
  },
  {
    broken: 'never requires a key',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, required: false })),
    caughtBy: ['H05'],
  },
  {
    broken: 'covers every method',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, methods: ['GET', 'PUT', 'DELETE', 'POST', 'PATCH'] })),
    caughtBy: ['H06'],
  },
  {
    broken: 'stores 5xx answers',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, storeStatus: () => true })),
    caughtBy: ['H09'],
  },
  {
    broken: 'drops the principal from the scope',
    kind: 'memory',
    make: withOptions(({ principal: _dropped, ...o }) => o),
    caughtBy: ['H10'],
  },
  {
    broken: 'replays set-cookie and every other header',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, replayHeaders: ['set-cookie', 'x-internal'] })),
    caughtBy: ['H11'],
  },
  {
    broken: 'ignores maxResponseBytes (keeps bodies up to the default limit)',
    kind: 'memory',
    make: withOptions(({ maxResponseBytes: _dropped, ...o }) => o),
    caughtBy: ['H12', 'H13'],
  },
  {
    broken: 'runs the route when the store is down',
    kind: 'redis',
    make: withOptions((o) => ({ ...o, onStoreError: 'process' })),
    caughtBy: ['H14'],
  },
];

/** H08 runs only where a control breaks it; it takes a lease-long wait. */
const withoutCrash = (id: string) => id !== 'H08';
/** A broken centre may leave a case waiting for an answer that never comes: fail it sooner. */
const timing = { caseTimeoutMs: 8_000, waitMs: 4_000 };
/** Long enough for every case of a suite, run a few at a time, to time out. */
const CONTROL_TIMEOUT_MS = 60_000;

describe('http conformance negative controls', () => {
  for (const kind of ['memory', 'redis'] as const) {
    it(`the centre passes every case through the collected runner (${kind} store)`, async () => {
      const cases = collectHttpCases({ ...centreHarness(kind), cases: withoutCrash });
      const results = await runCollectedCases(cases, { concurrency: CONCURRENCY });
      expect(results.length).toBeGreaterThanOrEqual(12);
      expect(failedCaseIds(results), describeFailedCases(results)).toEqual([]);
    });
  }

  for (const control of controls) {
    it(
      `catches a centre that ${control.broken}`,
      async () => {
        const harness = {
          ...centreHarness(control.kind, control.make),
          cases: withoutCrash,
          timing,
        };
        const results = await runCollectedCases(collectHttpCases(harness), {
          concurrency: CONCURRENCY,
        });
        expect(failedCaseIds(results), describeFailedCases(results)).toEqual(
          expect.arrayContaining(control.caughtBy),
        );
      },
      CONTROL_TIMEOUT_MS,
    );
  }
});
