import { hash } from 'node:crypto';
import { PayloadNotFingerprintableError } from '../errors/message.js';

/**
 * What a payload to fingerprint may be: bytes or a string, hashed as they are, or a JSON value
 * (a plain object, an array, a number, a boolean, `null`: what `express.json()` hands a route),
 * hashed in a canonical form. Anything else is refused at run time with
 * `PayloadNotFingerprintableError` (see `fingerprint`).
 */
export type FingerprintablePayload = Uint8Array | string | number | boolean | null | object;

/** Deeper payloads are refused rather than left to overflow the stack. */
const MAX_DEPTH = 1_000;

/**
 * SHA-256 of a payload, base64url: what a record remembers to detect key reuse.
 *
 * Bytes and strings are hashed as they are (a string as its UTF-8 bytes). Any other value is
 * hashed as its canonical JSON text: the text `JSON.stringify` gives, without whitespace, with
 * the keys of every object sorted (by UTF-16 code unit). So `{ a: 1, b: 2 }` and `{ b: 2, a: 1 }`
 * fingerprint alike, and so do an object and the same JSON text written with sorted keys.
 * As in JSON, a property whose value is `undefined` is left out and an `undefined` array item is
 * `null`. What JSON would silently change or cannot express is refused with a typed
 * `PayloadNotFingerprintableError` naming where it is: a BigInt, a function, a symbol, a number
 * that is not finite, a cycle, an object that is not plain (a `Date`, a `Map`, a class instance,
 * a `Uint8Array` inside an object: convert it first), or nesting deeper than 1 000 levels.
 *
 * @example
 * fingerprint({ amount: 10, currency: 'EUR' }) === fingerprint({ currency: 'EUR', amount: 10 }); // true
 */
export function fingerprint(payload: FingerprintablePayload): string {
  // crypto.hash (Node >= 20.12) is one call instead of a Hash object.
  if (typeof payload === 'string' || payload instanceof Uint8Array) {
    return hash('sha256', payload, 'base64url');
  }
  return hash('sha256', canonicalJson(payload, 'payload', new Set()), 'base64url');
}

function canonicalJson(value: unknown, path: string, open: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new PayloadNotFingerprintableError(path, String(value));
      return JSON.stringify(value);
    case 'object':
      if (value === null) return 'null';
      if (open.has(value)) throw new PayloadNotFingerprintableError(path, 'a cycle');
      if (open.size >= MAX_DEPTH) {
        throw new PayloadNotFingerprintableError(path, `nesting deeper than ${MAX_DEPTH} levels`);
      }
      open.add(value);
      try {
        return Array.isArray(value) ? arrayJson(value, path, open) : objectJson(value, path, open);
      } finally {
        open.delete(value);
      }
    case 'bigint':
      return refuse(path, 'a BigInt');
    default:
      return refuse(path, `a ${typeof value}`);
  }
}

function arrayJson(items: readonly unknown[], path: string, open: Set<object>): string {
  const parts: string[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    parts.push(item === undefined ? 'null' : canonicalJson(item, `${path}[${index}]`, open));
  }
  return `[${parts.join(',')}]`;
}

function objectJson(value: object, path: string, open: Set<object>): string {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return refuse(path, `a ${typeof name === 'string' && name ? name : 'non-plain object'}`);
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item, propertyPath(path, key), open)}`);
  }
  return `{${parts.join(',')}}`;
}

function propertyPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function refuse(path: string, what: string): never {
  throw new PayloadNotFingerprintableError(path, what);
}
