import { hash } from 'node:crypto';

/** SHA-256 of the payload bytes, base64url: what a record remembers to detect key reuse. */
export function fingerprint(payload: Uint8Array | string): string {
  // crypto.hash (Node >= 20.12): one call instead of a Hash object, on every message's path.
  return hash('sha256', payload, 'base64url');
}
