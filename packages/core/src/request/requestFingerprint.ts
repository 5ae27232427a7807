import { createHash } from 'node:crypto';

/**
 * What makes two requests with one key "the same" by default: SHA-256 (hex) over the parts that
 * name the operation (HTTP: method and target; gRPC: the method path) and the request bytes,
 * each part length-prefixed so that no two part lists share the hashed text.
 */
export function requestFingerprint(parts: readonly string[], body: Uint8Array): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}`);
  return hash.update(body).digest('hex');
}
