import { ResultNotSerializableError } from '../errors/store.js';
import type { ResultSerializer } from './types.js';

/**
 * The stored text of a result that holds bytes starts with this; JSON text never starts with
 * `~`, so a record written before bytes were supported (plain JSON) still reads as it was.
 */
export const BYTES_FORMAT_PREFIX = '~1:';
/** In the bytes format, a `Uint8Array` is this and its base64; a user's `~…` string gets `~~…`. */
const BYTES_TAG = '~b:';
const TILDE = 0x7e;

/** Thrown by the plain pass on meeting bytes, so that the result is written again tagged. */
const bytesMet = Symbol('bytes met');

/**
 * JSON without a reviver for plain results: a stored `{"__proto__": …}` comes back as a plain own
 * property and never touches a prototype. A result holding `Uint8Array`s (a `Buffer` too, at any
 * depth) is written in a tagged form (`BYTES_FORMAT_PREFIX`, each byte array as base64) and
 * replays with equal `Uint8Array`s; any other binary view (`Float64Array`, `DataView`,
 * `ArrayBuffer`) is refused rather than stored as a lossy object. The size limit of the store
 * counts the text as written, so bytes count about 4/3 of their length.
 */
export const jsonSerializer: ResultSerializer = Object.freeze({
  serialize(result: unknown): string {
    const value = result === undefined ? null : result;
    try {
      return JSON.stringify(value, plainReplacer);
    } catch (error) {
      if (error === bytesMet) return serializeTagged(value);
      throw asNotSerializable(error);
    }
  },
  deserialize(text: string): unknown {
    if (text.startsWith(BYTES_FORMAT_PREFIX)) {
      return JSON.parse(text.slice(BYTES_FORMAT_PREFIX.length), reviveTagged);
    }
    return JSON.parse(text);
  },
});

function serializeTagged(value: unknown): string {
  try {
    return BYTES_FORMAT_PREFIX + JSON.stringify(value, taggedReplacer);
  } catch (error) {
    throw asNotSerializable(error);
  }
}

// `this` is the holder: a Buffer's own toJSON has already replaced it in `value`.
function plainReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  if (typeof value === 'object') {
    if (value !== null && isBinary(this[key])) throw bytesMet;
    return value;
  }
  return refuseNonData(value);
}

function taggedReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === TILDE ? `~${value}` : value;
  if (typeof value === 'object') {
    const original = value === null ? null : this[key];
    if (original instanceof Uint8Array) {
      const bytes = Buffer.from(original.buffer, original.byteOffset, original.byteLength);
      return BYTES_TAG + bytes.toString('base64');
    }
    if (isBinary(original)) refuseView(original);
    return value;
  }
  return refuseNonData(value);
}

/** `JSON.parse` defines each revived property on its holder: no prototype is ever set. */
function reviveTagged(_key: string, value: unknown): unknown {
  if (typeof value !== 'string' || value.charCodeAt(0) !== TILDE) return value;
  if (value.charCodeAt(1) === TILDE) return value.slice(1);
  if (value.startsWith(BYTES_TAG)) {
    return new Uint8Array(Buffer.from(value.slice(BYTES_TAG.length), 'base64'));
  }
  throw new SyntaxError(`stored result holds an unknown tag: ${value.slice(0, 8)}`);
}

function isBinary(value: unknown): boolean {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

function refuseView(value: unknown): never {
  const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'view';
  throw new ResultNotSerializableError(`a ${name} is not stored: only Uint8Array bytes are`);
}

// JSON.stringify silently drops functions and symbols; refuse them instead of storing less.
function refuseNonData(value: unknown): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new ResultNotSerializableError(`a ${typeof value} is not data`);
  }
  return value;
}

function asNotSerializable(error: unknown): ResultNotSerializableError {
  if (error instanceof ResultNotSerializableError) return error;
  return new ResultNotSerializableError(
    error instanceof Error ? error.message : 'JSON.stringify failed',
    error,
  );
}
