import { concatBytes } from '../concatBytes.js';
import { RequestBodyTooLargeError } from './errors.js';

/**
 * Reads a request's body once, into bytes that every attempt sends again. Whatever the body
 * was (string, bytes, Blob, URLSearchParams, FormData, a stream), the Request has already
 * encoded it and set its content type (a FormData boundary included), so the bytes match the
 * headers. Over `maxBytes` it stops reading and throws `RequestBodyTooLargeError`.
 */
export async function readReplayableBody(
  request: Request,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array | null> {
  if (request.body === null) return null;
  const reader = request.body.getReader();
  const cancelOnAbort = (): void => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener('abort', cancelOnAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new RequestBodyTooLargeError(total, maxBytes);
      }
      chunks.push(value);
    }
    return concatBytes(chunks, total);
  } finally {
    signal?.removeEventListener('abort', cancelOnAbort);
    reader.releaseLock();
  }
}
