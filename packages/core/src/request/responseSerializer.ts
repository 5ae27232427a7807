import { jsonSerializer } from '../engine/serializer.js';
import type { ResultSerializer } from '../engine/types.js';
import { isStoredResponse, type ResponseLine } from './storedResponse.js';

/**
 * Writes a stored response straight into the text core's JSON serializer writes for it (its
 * bytes format: `~1:` then JSON, the body as `~b:` + base64, strings that start with `~` doubled),
 * in one pass instead of its two replacer walks; reads with core's serializer, so records read
 * the same whichever wrote them. Anything else, a response without body bytes included (core
 * writes those as plain JSON), goes to core's serializer.
 */
export const responseSerializer: ResultSerializer = Object.freeze({
  serialize(result: unknown): string {
    if (!isStoredResponse(result) || result.body === undefined) {
      return jsonSerializer.serialize(result);
    }
    let text = `~1:{"status":${result.status},"headers":${lines(result.headers)}`;
    if (result.trailers !== undefined) text += `,"trailers":${lines(result.trailers)}`;
    if (result.message !== undefined) text += `,"message":${quoted(result.message)}`;
    const { buffer, byteOffset, byteLength } = result.body;
    text += `,"body":"~b:${Buffer.from(buffer, byteOffset, byteLength).toString('base64')}"`;
    if (result.bodyOmitted !== undefined) text += `,"bodyOmitted":${quoted(result.bodyOmitted)}`;
    return `${text}}`;
  },
  deserialize: (text: string) => jsonSerializer.deserialize(text),
});

function lines(pairs: readonly ResponseLine[]): string {
  return JSON.stringify(pairs.map(([name, value]) => [escapeTilde(name), escapeTilde(value)]));
}

function quoted(value: string): string {
  return JSON.stringify(escapeTilde(value));
}

function escapeTilde(value: string): string {
  return value.charCodeAt(0) === 0x7e ? `~${value}` : value;
}
