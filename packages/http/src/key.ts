/** What the `Idempotency-Key` header held. */
export type KeyParse =
  | { kind: 'key'; key: string }
  | { kind: 'missing' }
  | { kind: 'malformed'; reason: string };

const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Reads the key: a Structured Field string (RFC 8941 sf-string, as the IETF draft defines the
 * header: printable ASCII between double quotes, `\"` and `\\` escaped) or a bare key (visible
 * ASCII without quotes, backslashes or commas, as Stripe's clients send it). Empty keys, keys over
 * `maxLength` characters, control characters, non-ASCII and broken quoting are malformed.
 */
export function parseIdempotencyKey(header: string | null, maxLength: number): KeyParse {
  if (header === null) return { kind: 'missing' };
  // Fetch's Headers already trimmed the optional whitespace around the value.
  const parsed = header.charCodeAt(0) === DQUOTE ? parseSfString(header) : parseBare(header);
  if (parsed.kind !== 'key') return parsed;
  if (parsed.key.length === 0) return { kind: 'malformed', reason: 'the key is empty' };
  if (parsed.key.length > maxLength) {
    return {
      kind: 'malformed',
      reason: `the key is ${parsed.key.length} characters long, over the limit of ${maxLength}`,
    };
  }
  return parsed;
}

function parseSfString(header: string): KeyParse {
  let key = '';
  for (let i = 1; i < header.length; i += 1) {
    const code = header.charCodeAt(i);
    if (code === BACKSLASH) {
      const next = header.charCodeAt(i + 1);
      if (next !== DQUOTE && next !== BACKSLASH) {
        return { kind: 'malformed', reason: 'a backslash may only escape " or \\ in a quoted key' };
      }
      key += header[i + 1];
      i += 1;
    } else if (code === DQUOTE) {
      if (i !== header.length - 1) {
        return { kind: 'malformed', reason: 'characters follow the closing quote of the key' };
      }
      return { kind: 'key', key };
    } else if (code < 0x20 || code > 0x7e) {
      return { kind: 'malformed', reason: 'the key holds a control or non-ASCII character' };
    } else {
      key += header[i];
    }
  }
  return { kind: 'malformed', reason: 'the quoted key has no closing quote' };
}

function parseBare(header: string): KeyParse {
  for (let i = 0; i < header.length; i += 1) {
    const code = header.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      return { kind: 'malformed', reason: 'the key holds a control or non-ASCII character' };
    }
    if (code === 0x20 || code === 0x2c || code === DQUOTE || code === BACKSLASH) {
      // A comma or space is what fetch makes of two header lines: one key per request.
      return {
        kind: 'malformed',
        reason: 'an unquoted key may not hold spaces, commas, quotes or backslashes',
      };
    }
  }
  return { kind: 'key', key: header };
}
