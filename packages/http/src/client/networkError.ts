// Codes Node and undici put on a connection that failed or broke before the response came.
const NETWORK_ERROR_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/**
 * Whether a fetch rejection means the request may not have reached the server, or its answer
 * did not come back: fetch rejects so with a `TypeError` (the standard's "network error"),
 * other fetch implementations with an error carrying one of the codes above.
 */
export function isNetworkError(error: unknown): boolean {
  if (error instanceof TypeError) return true;
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth += 1) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}
