import { allowListedLines } from '@idemq/core/adapter';
import { createGuard, type HttpFront } from './guard.js';
import type { HttpSettings } from './options.js';
import { problemResponse } from './problems.js';
import { readBodyUpTo } from './responseBody.js';
import {
  BODY_OMITTED_HEADER,
  bodyBytes,
  bodyFor,
  REPLAYED_HEADER,
  replayResponse,
  type StoredResponse,
} from './responseEnvelope.js';
import type { HttpIdempotency, HttpIdempotencyOptions } from './types.js';

/**
 * The framework-free centre: makes a route run once per `Idempotency-Key` and answers every
 * retry with the first response (see the package README for the status codes).
 */
export function createHttpIdempotency(options: HttpIdempotencyOptions): HttpIdempotency {
  const guard = createGuard(options, fetchFront);
  return { handle: (request, next) => guard(request, next) };
}

/** The centre's front: WHATWG Request in, Response out. */
const fetchFront: HttpFront<Request, Response> = {
  method: (request) => request.method,
  header: (request, name) => request.headers.get(name),
  path: (request) => new URL(request.url).pathname,
  target: (request) => {
    const url = new URL(request.url);
    return `${url.pathname}${url.search}`;
  },
  async readBody(request) {
    if (request.body === null) return { bytes: new Uint8Array(0), forwarded: request };
    const bytes = new Uint8Array(await request.arrayBuffer());
    return { bytes, forwarded: new Request(request, { body: bodyBytes(bytes) }) };
  },
  capture: captureResponse,
  problem: problemResponse,
  replay,
};

/** The route's Response read up to the limit: the stored envelope and its client's copy. */
async function captureResponse(response: Response, settings: HttpSettings<Request>) {
  const { status, statusText } = response;
  const headers = allowListedLines(response.headers, settings.replayHeaders);
  const read = await readBodyUpTo(response.body, settings.maxResponseBytes);
  const stored: StoredResponse =
    read.kind === 'complete'
      ? { status, headers, body: read.bytes }
      : { status, headers, bodyOmitted: 'too-large' };
  const forClient = new Response(
    bodyFor(
      status,
      read.kind === 'complete' ? bodyBytes(read.bytes) : ReadableStream.from(read.rest),
    ),
    { status, statusText, headers: response.headers },
  );
  return { stored, forClient };
}

function replay(stored: StoredResponse | undefined): Response {
  if (stored !== undefined) return replayResponse(stored);
  // The store kept no response (its limit is below even the status and headers).
  return new Response(null, {
    status: 200,
    headers: { [REPLAYED_HEADER]: 'true', [BODY_OMITTED_HEADER]: 'too-large' },
  });
}
