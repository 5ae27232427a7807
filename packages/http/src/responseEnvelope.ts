import type { BodyOmission, StoredResponse } from '@idemq/core/adapter';
import { isNullBodyStatus } from './nullBodyStatus.js';

export type { BodyOmission, StoredResponse };

/** The header marking every replayed response. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** The header saying a replay's body was not stored, and why. */
export const BODY_OMITTED_HEADER = 'idempotent-body-omitted';

type ResponseBody = ConstructorParameters<typeof Response>[0];

/** A body for `status`: `null` where HTTP allows none. */
export function bodyFor(status: number, body: ResponseBody): ResponseBody {
  return isNullBodyStatus(status) ? null : body;
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
