import { createHash } from 'node:crypto';

/**
 * The default request fingerprint: SHA-256 (hex) over the method, the request target (path and
 * query as sent) and the body bytes, method and target length-prefixed so that no two requests
 * share the hashed text by accident. The target, not the route pattern: under a binding's
 * pattern `/orders/:id/pay`, one key sent to `/orders/1/pay` and then `/orders/2/pay` is two
 * requests (422), never a replay of the first order's answer.
 */
export function defaultFingerprint(method: string, target: string, body: Uint8Array): string {
  return createHash('sha256')
    .update(`${method.length}:${method}${target.length}:${target}`)
    .update(body)
    .digest('hex');
}
