import { isNullBodyStatus } from './nullBodyStatus.js';

/** Why a stored response has no body. */
export type BodyOmission = 'too-large';

/**
 * What is stored for a completed request: the status, the allow-listed headers and the body
 * bytes, or why the body was left out.
 */
export interface StoredResponse {
  status: number;
  headers: [string, string][];
  body?: Uint8Array;
  bodyOmitted?: BodyOmission;
}

/** The header marking every replayed response. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** The header saying a replay's body was not stored, and why. */
export const BODY_OMITTED_HEADER = 'idempotent-body-omitted';

type ResponseBody = ConstructorParameters<typeof Response>[0];

/** A body for `status`: `null` where HTTP allows none. */
export function bodyFor(status: number, body: ResponseBody): ResponseBody {
  return isNullBodyStatus(status) ? null : body;
}

/** True when a stored result is a response envelope this package wrote. */
export function isStoredResponse(value: unknown): value is StoredResponse {
  if (typeof value !== 'object' || value === null) return false;
  const { status, headers, body, bodyOmitted } = value as Record<string, unknown>;
  return (
    typeof status === 'number' &&
    Number.isInteger(status) &&
    Array.isArray(headers) &&
    headers.every(
      (pair) =>
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        typeof pair[1] === 'string',
    ) &&
    (body === undefined || body instanceof Uint8Array) &&
    (bodyOmitted === undefined || bodyOmitted === 'too-large')
  );
}

/** The replay of a stored response: its status, headers and bytes, marked as a replay. */
export function replayResponse(stored: StoredResponse): Response {
  const headers = new Headers();
  for (const [name, value] of stored.headers) headers.append(name, value);
  headers.set(REPLAYED_HEADER, 'true');
  if (stored.bodyOmitted !== undefined) headers.set(BODY_OMITTED_HEADER, stored.bodyOmitted);
  const body = stored.body === undefined ? null : bodyBytes(stored.body);
  return new Response(bodyFor(stored.status, body), { status: stored.status, headers });
}

/** The bytes as a body the Response constructor takes (an ArrayBuffer-backed view). */
export function bodyBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : new Uint8Array(bytes);
}
