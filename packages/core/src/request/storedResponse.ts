import { DEFAULT_MAX_RESULT_BYTES } from '../store/resultLimit.js';

/** Room left in the store's default result limit for the status, headers and trailers. */
const ENVELOPE_ROOM_BYTES = 4 * 1024;

/**
 * The largest body a front stores by default: what fits the store's default result limit beside
 * the envelope, base64 making stored bytes 4/3 as long.
 */
export const DEFAULT_MAX_STORED_BODY_BYTES = Math.floor(
  ((DEFAULT_MAX_RESULT_BYTES - ENVELOPE_ROOM_BYTES) * 3) / 4,
);

/** Why a stored response has no body. */
export type BodyOmission = 'too-large';

/** A header or metadata line: name (lower case) and value. */
export type ResponseLine = [name: string, value: string];

/**
 * What a request/response front stores for a completed request and replays to its retries: the
 * status (an HTTP status, a gRPC code), the allow-listed headers (gRPC: initial metadata) and
 * trailers, the status message (gRPC details), and the body bytes or why they were left out.
 */
export interface StoredResponse {
  status: number;
  headers: ResponseLine[];
  trailers?: ResponseLine[];
  message?: string;
  body?: Uint8Array;
  bodyOmitted?: BodyOmission;
}

/** True when a stored result is a response a front wrote. */
export function isStoredResponse(value: unknown): value is StoredResponse {
  if (typeof value !== 'object' || value === null) return false;
  const { status, headers, trailers, message, body, bodyOmitted } = value as Record<
    string,
    unknown
  >;
  return (
    typeof status === 'number' &&
    Number.isInteger(status) &&
    isLines(headers) &&
    (trailers === undefined || isLines(trailers)) &&
    (message === undefined || typeof message === 'string') &&
    (body === undefined || body instanceof Uint8Array) &&
    (bodyOmitted === undefined || bodyOmitted === 'too-large')
  );
}

function isLines(value: unknown): value is ResponseLine[] {
  return (
    Array.isArray(value) &&
    value.every(
      (pair) =>
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        typeof pair[1] === 'string',
    )
  );
}

/**
 * The allow-listed lines of a response, names in lower case, in order. A repeated name (HTTP
 * `set-cookie`, gRPC metadata) keeps one pair per line.
 */
export function allowListedLines(
  lines: Iterable<[string, string]>,
  allowList: ReadonlySet<string>,
): ResponseLine[] {
  const kept: ResponseLine[] = [];
  for (const [name, value] of lines) {
    const lower = name.toLowerCase();
    if (allowList.has(lower)) kept.push([lower, value]);
  }
  return kept;
}
