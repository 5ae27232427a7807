import type { MetadataValue } from '@grpc/grpc-js';

/** What a call's idempotency key was. */
export type KeyRead =
  | { kind: 'key'; key: string }
  | { kind: 'missing' }
  | { kind: 'malformed'; reason: string };

/**
 * Checks a key: one printable-ASCII value (what gRPC allows in text metadata) of 1 to
 * `maxLength` characters. Two values for the entry are refused: one key per call.
 */
export function readKey(
  values: readonly (MetadataValue | undefined)[],
  maxLength: number,
): KeyRead {
  const value = values[0];
  if (value === undefined) return { kind: 'missing' };
  if (values.length > 1) {
    return { kind: 'malformed', reason: `the call carries ${values.length} keys; send one` };
  }
  if (typeof value !== 'string') return { kind: 'malformed', reason: 'the key must be text' };
  if (value.length === 0) return { kind: 'malformed', reason: 'the key is empty' };
  if (value.length > maxLength) {
    return {
      kind: 'malformed',
      reason: `the key is ${value.length} characters long, over the limit of ${maxLength}`,
    };
  }
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) {
      return { kind: 'malformed', reason: 'the key holds a space, control or non-ASCII character' };
    }
  }
  return { kind: 'key', key: value };
}
