import { BYTES_FORMAT_PREFIX, jsonSerializer } from '../engine/serializer.js';
import type { ResultSerializer } from '../engine/types.js';
import { isStoredResponse, type ResponseLine, type StoredResponse } from './storedResponse.js';

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
  deserialize(text: string): unknown {
    if (text.startsWith(RESPONSE_TEXT_START)) {
      try {
        const response = readStoredResponse(JSON.parse(text.slice(BYTES_FORMAT_PREFIX.length)));
        if (response !== undefined) return response;
      } catch (error) {
        if (error !== unreadable) throw error;
      }
    }
    return jsonSerializer.deserialize(text);
  },
});

/** How `serialize` starts a stored response with body bytes. */
const RESPONSE_TEXT_START = `${BYTES_FORMAT_PREFIX}{"status":`;
const BYTES_TAG = '~b:';
const TILDE = 0x7e;

/** Thrown on a tag this reader leaves to core's serializer (which refuses unknown tags). */
const unreadable = Symbol('unreadable');

/**
 * What core's reviver makes of a stored response, read field by field instead of through a
 * reviver call per value; `undefined` for anything else, which core's serializer then reads.
 */
function readStoredResponse(parsed: unknown): StoredResponse | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { status, headers, trailers, message, body, bodyOmitted, ...rest } = parsed as Record<
    string,
    unknown
  >;
  if (Object.keys(rest).length > 0 || typeof body !== 'string' || !body.startsWith(BYTES_TAG)) {
    return undefined;
  }
  const response: Record<string, unknown> = { status, headers: readLines(headers) };
  if (trailers !== undefined) response.trailers = readLines(trailers);
  if (message !== undefined) response.message = readText(message);
  response.body = new Uint8Array(Buffer.from(body.slice(BYTES_TAG.length), 'base64'));
  if (bodyOmitted !== undefined) response.bodyOmitted = readText(bodyOmitted);
  return isStoredResponse(response) ? response : undefined;
}

function readLines(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((pair: unknown) => (Array.isArray(pair) ? pair.map(readText) : pair));
}

function readText(value: unknown): unknown {
  if (typeof value !== 'string' || value.charCodeAt(0) !== TILDE) return value;
  if (value.charCodeAt(1) === TILDE) return value.slice(1);
  throw unreadable;
}

function lines(pairs: readonly ResponseLine[]): string {
  return JSON.stringify(pairs.map(([name, value]) => [escapeTilde(name), escapeTilde(value)]));
}

function quoted(value: string): string {
  return JSON.stringify(escapeTilde(value));
}

function escapeTilde(value: string): string {
  return value.charCodeAt(0) === TILDE ? `~${value}` : value;
}
