// `@idemq/http/client`: a fetch that sends each logical request once, whatever it retries.
export {
  HttpRetriesExhaustedError,
  RequestBodyTooLargeError,
  type RetriesExhaustedReason,
} from './errors.js';
export { idempotentFetch } from './idempotentFetch.js';
export type { KeyFormat } from './keyHeader.js';
export {
  defaultRetryOn,
  type FetchFunction,
  IDEMPOTENT_FETCH_DEFAULTS,
  type IdempotentFetchOptions,
  type RetryEvent,
} from './options.js';
export { parseRetryAfter } from './retryAfter.js';
