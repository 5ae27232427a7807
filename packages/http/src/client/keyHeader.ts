import { ErrorCodes, InvalidRequestIdError } from '@idemq/core';

/** How the key is written in the header. */
export type KeyFormat =
  /** `Idempotency-Key: 0190…`, as Stripe's clients send it. */
  | 'token'
  /** `Idempotency-Key: "0190…"`: a Structured Field string (RFC 8941), as the IETF draft writes it. */
  | 'sf-string';

// Printable ASCII without spaces at either end (HTTP would strip those).
const HEADER_SAFE_KEY = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The header value for `key`. An sf-string escapes `"` and `\`; both forms take printable ASCII
 * only, with no space at either end, which
 * every server's parser accepts.
 */
export function formatKeyHeader(key: string, format: KeyFormat): string {
  if (!HEADER_SAFE_KEY.test(key)) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `An idempotency key must be printable ASCII without spaces at either end, got ${JSON.stringify(key)}`,
    );
  }
  if (format === 'token') return key;
  return `"${key.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}
