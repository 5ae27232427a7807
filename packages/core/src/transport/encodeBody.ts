import type { OutgoingMessage } from './transport.js';

const JSON_TYPE = 'application/json';

/** Turns an outgoing body into bytes and the content type that describes them. */
export function encodeBody(message: OutgoingMessage): { bytes: Uint8Array; contentType?: string } {
  const { body, contentType } = message;
  if (body instanceof Uint8Array) return withType(body, contentType);
  if (typeof body === 'string') return withType(Buffer.from(body, 'utf8'), contentType);
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError('message body is not JSON-serializable');
  return { bytes: Buffer.from(json, 'utf8'), contentType: contentType ?? JSON_TYPE };
}

function withType(bytes: Uint8Array, contentType: string | undefined) {
  return contentType === undefined ? { bytes } : { bytes, contentType };
}
