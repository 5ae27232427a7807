import { jsonSerializer, type ResultSerializer } from '@idemq/core';
import { isStoredResponse } from './responseEnvelope.js';

/**
 * Writes a stored response straight into the text core's JSON serializer writes for it (its
 * bytes format: `~1:` then JSON, the body as `~b:` + base64, strings that start with `~` doubled),
 * in one pass instead of its two replacer walks; reads with core's serializer, so records read
 * the same whichever wrote them. Anything else, a response without body bytes included (core
 * writes those as plain JSON), goes to core's serializer.
 */
export const envelopeSerializer: ResultSerializer = Object.freeze({
  serialize(result: unknown): string {
    if (!isStoredResponse(result) || result.body === undefined) {
      return jsonSerializer.serialize(result);
    }
    const headers = result.headers.map(([name, value]) => [escapeTilde(name), escapeTilde(value)]);
    const { buffer, byteOffset, byteLength } = result.body;
    const base64 = Buffer.from(buffer, byteOffset, byteLength).toString('base64');
    let text = `~1:{"status":${result.status},"headers":${JSON.stringify(headers)},"body":"~b:${base64}"`;
    if (result.bodyOmitted !== undefined) {
      text += `,"bodyOmitted":${JSON.stringify(escapeTilde(result.bodyOmitted))}`;
    }
    return `${text}}`;
  },
  deserialize: (text: string) => jsonSerializer.deserialize(text),
});

function escapeTilde(value: string): string {
  return value.charCodeAt(0) === 0x7e ? `~${value}` : value;
}
