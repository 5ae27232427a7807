// @idemq/http: the Idempotency-Key header on WHATWG Request/Response; bindings in subpaths.
export { createHttpIdempotency } from './createHttpIdempotency.js';
export { defaultFingerprint } from './fingerprint.js';
export { type KeyParse, parseIdempotencyKey } from './key.js';
export { HTTP_IDEMPOTENCY_DEFAULTS } from './options.js';
export { type ProblemSlug, ProblemTypes, problemTypeUri } from './problems.js';
export { DEFAULT_REPLAY_HEADERS } from './replayHeaders.js';
export {
  BODY_OMITTED_HEADER,
  type BodyOmission,
  REPLAYED_HEADER,
  type StoredResponse,
} from './responseEnvelope.js';
export type { HttpContext, HttpIdempotency, HttpIdempotencyOptions, HttpNext } from './types.js';
