import { isNullBodyStatus } from '../src/bindingHeaders.js';
import type { HttpContext, HttpIdempotency, HttpNext } from '../src/types.js';

/** What a test centre observed of one request. */
export interface Seen {
  method: string;
  url: string;
  body: Uint8Array | undefined;
  routeStatus: number | undefined;
  routeError: unknown;
}

export interface TestCentre extends HttpIdempotency {
  readonly seen: Seen[];
}

const COVERED = new Set(['POST', 'PATCH']);

function contextFor(key: string | undefined): HttpContext {
  return {
    idempotencyKey: key,
    fencingToken: key ? 7 : undefined,
    attempt: key ? 1 : undefined,
    signal: new AbortController().signal,
  };
}

/**
 * A test double of the centre: covered methods with an `Idempotency-Key` run once per key and
 * every later request with that key gets the stored response (all headers, body bytes) plus
 * `idempotent-replayed: true`; a route error or 5xx is not stored. Other methods pass through
 * with their body unread. `answerWithoutRoute` makes it answer 409 itself.
 */
export function replayingCentre(options: { answerWithoutRoute?: boolean } = {}): TestCentre {
  const stored = new Map<
    string,
    { status: number; headers: Array<[string, string]>; body: Uint8Array }
  >();
  const seen: Seen[] = [];
  return {
    seen,
    async handle(request: Request, next: HttpNext): Promise<Response> {
      if (!COVERED.has(request.method)) {
        seen.push({
          method: request.method,
          url: request.url,
          body: undefined,
          routeStatus: undefined,
          routeError: undefined,
        });
        return next(request, contextFor(undefined));
      }
      const body = new Uint8Array(await request.arrayBuffer());
      const entry: Seen = {
        method: request.method,
        url: request.url,
        body,
        routeStatus: undefined,
        routeError: undefined,
      };
      seen.push(entry);
      if (options.answerWithoutRoute) {
        return new Response('{"title":"in progress"}', {
          status: 409,
          headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
        });
      }
      const key = request.headers.get('idempotency-key') ?? '';
      const earlier = stored.get(key);
      if (earlier !== undefined) {
        const headers = new Headers(earlier.headers);
        headers.set('idempotent-replayed', 'true');
        return new Response(bodyFor(earlier.status, earlier.body), {
          status: earlier.status,
          headers,
        });
      }
      let response: Response;
      try {
        response = await next(request, contextFor(key));
      } catch (error) {
        entry.routeError = error;
        return new Response('centre saw an error', { status: 500 });
      }
      entry.routeStatus = response.status;
      const bytes = new Uint8Array(await response.arrayBuffer());
      const headers = [...response.headers];
      if (response.status < 500) stored.set(key, { status: response.status, headers, body: bytes });
      return new Response(bodyFor(response.status, bytes), {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    },
  };
}

function bodyFor(status: number, bytes: Uint8Array): Uint8Array | null {
  return isNullBodyStatus(status) ? null : bytes.slice();
}

/** A test double that runs the route and marks the answer with `x-centre: passed`. */
export function markingCentre(): TestCentre & { contexts: HttpContext[] } {
  const seen: Seen[] = [];
  const contexts: HttpContext[] = [];
  return {
    seen,
    contexts,
    async handle(request: Request, next: HttpNext): Promise<Response> {
      seen.push({
        method: request.method,
        url: request.url,
        body: undefined,
        routeStatus: undefined,
        routeError: undefined,
      });
      const ctx = contextFor(request.headers.get('idempotency-key') ?? undefined);
      contexts.push(ctx);
      const response = await next(request, ctx);
      const headers = new Headers(response.headers);
      headers.set('x-centre', 'passed');
      return new Response(response.body, { status: response.status, headers });
    },
  };
}
