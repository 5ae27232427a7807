import { ResultTooLargeError } from '../errors/store.js';

/** Default limit for a stored result, in UTF-8 bytes. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/** Every store calls this before writing a result, so no store holds an oversized record. */
export function assertResultFits(result: string | undefined, maxBytes: number): void {
  if (result === undefined) return;
  const bytes = Buffer.byteLength(result, 'utf8');
  if (bytes > maxBytes) throw new ResultTooLargeError(bytes, maxBytes);
}
