import { hash } from 'node:crypto';

/**
 * The store key of one idempotency record: `<prefix>:{<hash>}`.
 *
 * - Injective: the hash covers the scope's length, the scope and the id, so no (scope, id) pair
 *   can be spelt as another.
 * - Bounded: user bytes never enter the key, so its size is fixed by the prefix.
 * - Cluster-safe: the `{…}` hash tag is ours, derived from the hash, so every key of one record
 *   lands in one slot and user-supplied braces cannot steer slotting.
 */
export function recordKey(prefix: string, scope: string, requestId: string): string {
  const digest = hash(
    'sha256',
    `${Buffer.byteLength(scope, 'utf8')}:${scope}\u0000${requestId}`,
    'base64url',
  );
  return `${prefix}:{${digest}}`;
}
