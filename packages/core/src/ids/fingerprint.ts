import { createHash } from 'node:crypto';

/** SHA-256 of the payload bytes, base64url: what a record remembers to detect key reuse. */
export function fingerprint(payload: Uint8Array | string): string {
  return createHash('sha256').update(payload).digest('base64url');
}
