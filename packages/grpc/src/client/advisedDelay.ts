import type { Metadata } from '@grpc/grpc-js';
import { RETRY_AFTER_METADATA } from '../refusals.js';
import { retryDelayFromStatus, STATUS_DETAILS_KEY } from '../statusDetails.js';

const WHOLE_MS = /^\d+$/;

/**
 * The delay the server advises before another attempt, in ms: the `google.rpc.RetryInfo` of the
 * `grpc-status-details-bin` trailer, else a `retry-after-ms` entry of the trailers, then of the
 * response headers (a server may send it before failing). `undefined` when it advises none.
 */
export function advisedDelayMs(trailers: Metadata, headers?: Metadata): number | undefined {
  for (const details of trailers.get(STATUS_DETAILS_KEY)) {
    if (typeof details === 'string') continue;
    const delayMs = retryDelayFromStatus(details);
    if (delayMs !== undefined) return delayMs;
  }
  for (const metadata of headers === undefined ? [trailers] : [trailers, headers]) {
    const [value] = metadata.get(RETRY_AFTER_METADATA);
    if (typeof value !== 'string' || !WHOLE_MS.test(value)) continue;
    const delayMs = Number(value);
    if (Number.isSafeInteger(delayMs)) return delayMs;
  }
  return undefined;
}
