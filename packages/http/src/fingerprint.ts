import { createHash } from 'node:crypto';

/**
 * The default request fingerprint: SHA-256 (hex) over the method, the route and the body bytes,
 * method and route length-prefixed so that no two requests share the hashed text by accident.
 */
export function defaultFingerprint(method: string, route: string, body: Uint8Array): string {
  return createHash('sha256')
    .update(`${method.length}:${method}${route.length}:${route}`)
    .update(body)
    .digest('hex');
}
