import type { Metadata } from '@grpc/grpc-js';

/**
 * The metadata every attempt sends: a copy of the caller's, with a new key unless it carries one.
 * A copy, because a caller may pass one Metadata to many calls, and each is its own logical call.
 */
export function withIdempotencyKey(
  metadata: Metadata,
  metadataKey: string,
  newKey: () => string,
): Metadata {
  const sent = metadata.clone();
  if (sent.get(metadataKey).length === 0) sent.set(metadataKey, newKey());
  return sent;
}
