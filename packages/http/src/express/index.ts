// @idemq/http/express: the Express binding (Express 5 and 4).
export { type ExpressIdempotencyOptions, idempotency } from './expressBinding.js';
