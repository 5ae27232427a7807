/**
 * `@idemq/core/adapter`: the pieces a store or transport package is built from, kept out of the
 * main entry point, which holds only what applications use. The contracts themselves (`Store`,
 * `Transport`, `Delivery`, …) and the errors adapters throw stay in `@idemq/core`.
 */
export { toError } from '../errors/handler.js';
export { type CloudEventIdentity, cloudEventIdentity } from '../ids/cloudEvents.js';
export { recordKey } from '../ids/recordKey.js';
export { requestIdFromBytes, validateRequestId } from '../ids/requestId.js';
export { OptionsCheck } from '../options/optionsCheck.js';
export { requestScope } from '../request/requestScope.js';
export {
  createResponseGuard,
  type GuardedRequest,
  type ProducedResponse,
  type Refusal,
  type RefusalKind,
  type ResponseFront,
  type ResponseGuard,
  type ResponseGuardOptions,
  STORE_DOWN_RETRY_AFTER_MS,
} from '../request/responseGuard.js';
export { responseSerializer } from '../request/responseSerializer.js';
export {
  allowListedLines,
  type BodyOmission,
  DEFAULT_MAX_STORED_BODY_BYTES,
  isStoredResponse,
  type ResponseLine,
  type StoredResponse,
} from '../request/storedResponse.js';
export { completeEach, settle } from '../store/completeEach.js';
export { OperationBatcher, type OperationBatcherOptions } from '../store/operationBatcher.js';
export { assertResultFits } from '../store/resultLimit.js';
export { EarliestTimer } from '../timing/earliestTimer.js';
export { checkSubscribeRequest } from '../transport/checkSubscribeRequest.js';
export {
  deadLetterHeaders,
  MAX_DEAD_LETTER_REASON_CHARS,
} from '../transport/deadLetterHeaders.js';
export { encodeBody } from '../transport/encodeBody.js';
export { OnceSettlement, type Settlement } from '../transport/onceSettlement.js';
