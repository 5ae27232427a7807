import type { ServerResponse } from 'node:http';
import { allowListedLines } from '@idemq/core/adapter';
import { isNullBodyStatus } from '../nullBodyStatus.js';
import type { HttpSettings } from '../options.js';
import { type ProblemSlug, problemParts } from '../problems.js';
import { type BodyChunks, type BodyRead, readBodyUpTo } from '../responseBody.js';
import { BODY_OMITTED_HEADER, REPLAYED_HEADER, type StoredResponse } from '../responseEnvelope.js';
import { currentMethods, type RealResponseMethods } from './responseMethods.js';

/** Header values as node:http takes them; an array sends one line per value (`set-cookie`). */
export type NodeHeaders = Readonly<Record<string, string | number | readonly string[]>>;

/** What a node route answers: a status, headers and a body, written by the binding. */
export interface NodeAnswer {
  status: number;
  headers?: NodeHeaders;
  /** A string (sent as UTF-8), bytes, or chunks as they come (a `Readable`, any async iterable). */
  body?: string | Uint8Array | BodyChunks | null;
}

/** Refuses an answer node:http cannot send, as the route's own failure. */
export function assertAnswerStatus(status: number): void {
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new TypeError(`a node route must answer a status from 200 to 599, got ${status}`);
  }
}

/** The route's answer read up to the limit: the stored envelope and its client's copy. */
export async function captureAnswer<Req>(answer: NodeAnswer, settings: HttpSettings<Req>) {
  const { status } = answer;
  const replayed = allowListedLines(headerPairs(answer.headers), settings.replayHeaders);
  const read = await readUpTo(answer.body, status, settings.maxResponseBytes);
  const stored: StoredResponse =
    read.kind === 'complete'
      ? { status, headers: replayed, body: read.bytes }
      : { status, headers: replayed, bodyOmitted: 'too-large' };
  const forClient: NodeAnswer = {
    status,
    ...(answer.headers === undefined ? {} : { headers: answer.headers }),
    body: read.kind === 'complete' ? read.bytes : read.rest,
  };
  return { stored, forClient };
}

/** The replay of a stored response, or of a record that kept none, marked as a replay. */
export function replayAnswer(stored: StoredResponse | undefined): NodeAnswer {
  if (stored === undefined) {
    return {
      status: 200,
      headers: { [REPLAYED_HEADER]: 'true', [BODY_OMITTED_HEADER]: 'too-large' },
    };
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of stored.headers) {
    const earlier = headers[name];
    if (earlier === undefined) headers[name] = value;
    else headers[name] = Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
  }
  headers[REPLAYED_HEADER] = 'true';
  if (stored.bodyOmitted !== undefined) headers[BODY_OMITTED_HEADER] = stored.bodyOmitted;
  return { status: stored.status, headers, body: stored.body ?? null };
}

export function problemAnswer(
  slug: ProblemSlug,
  detail: string,
  headers?: Readonly<Record<string, string>>,
): NodeAnswer {
  return problemParts(slug, detail, headers);
}

/**
 * Sends an answer through `real` (the methods a binding may have replaced on `res`): a whole
 * body with its `content-length`, chunks as they come, waiting for the socket to drain. Resolves
 * once the response ended or the client went away; a body that fails midway destroys the
 * response, since ending it would hand the client a truncated body that looks complete.
 */
export async function writeAnswer(
  res: ServerResponse,
  answer: NodeAnswer,
  real: RealResponseMethods = currentMethods(res),
): Promise<void> {
  res.statusCode = answer.status;
  if (answer.headers !== undefined) {
    for (const name in answer.headers) res.setHeader(name, answer.headers[name] as string);
  }
  const { body } = answer;
  if (body === undefined || body === null || isNullBodyStatus(answer.status)) {
    real.end.call(res);
    return;
  }
  if (typeof body === 'string' || body instanceof Uint8Array) {
    real.end.call(res, body);
    return;
  }
  try {
    for await (const chunk of body) {
      if (res.destroyed) return;
      if (!real.write.call(res, chunk)) await drainedOrClosed(res);
    }
  } catch (error) {
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  if (!res.destroyed) real.end.call(res);
}

/** A whole body is measured at once; only chunks are read as they come. */
function readUpTo(
  body: NodeAnswer['body'],
  status: number,
  maxBytes: number,
): BodyRead | Promise<BodyRead> {
  if (body === undefined || body === null || isNullBodyStatus(status)) {
    return { kind: 'complete', bytes: new Uint8Array(0) };
  }
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    return readBodyUpTo(body, maxBytes);
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return bytes.byteLength > maxBytes
    ? { kind: 'too-large', rest: once(bytes) }
    : { kind: 'complete', bytes };
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** Every header line as a pair: an array value gives one pair per value. */
function headerPairs(headers: NodeHeaders | undefined): [string, string][] {
  const pairs: [string, string][] = [];
  if (headers === undefined) return pairs;
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const item of value) pairs.push([name, String(item)]);
    else pairs.push([name, String(value)]);
  }
  return pairs;
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}
