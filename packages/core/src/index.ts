// Engine
export { backoffDelayMs } from './engine/backoff.js';
export {
  type Consumer,
  ConsumerStateError,
  createConsumer,
  type StopReport,
} from './engine/createConsumer.js';
export { createIdempotency, type Idempotency } from './engine/createIdempotency.js';
export { type Decision, type DecisionPolicy, decide } from './engine/decide.js';
export {
  CONSUMER_DEFAULTS,
  IDEMPOTENCY_DEFAULTS,
  RETRY_DEFAULTS,
} from './engine/defaults.js';
export { InvalidPayloadError, MalformedPayloadError } from './engine/readMessage.js';
export { jsonSerializer, ResultNotSerializableError } from './engine/serializer.js';
export type {
  ConsumedMessage,
  ConsumerOptions,
  Handler,
  HandlerContext,
  IdempotencyOptions,
  ResultSerializer,
  RetryPolicy,
  RunOptions,
  RunOutcome,
} from './engine/types.js';
// Errors
export {
  type ErrorCode,
  ErrorCodes,
  HandlerFailedError,
  IdemqError,
  type IdemqErrorOptions,
  InvalidOptionsError,
  isIdemqError,
  KeyReuseError,
  LeaseLostError,
  MaxAttemptsError,
  NonRetriableError,
  PayloadNotFingerprintableError,
  ResultTooLargeError,
  StoreClosedError,
  StoreUnavailableError,
  TransportUnavailableError,
  toError,
} from './errors/index.js';
// Ids
export { type FingerprintablePayload, fingerprint } from './ids/fingerprint.js';
export { recordKey } from './ids/recordKey.js';
export {
  DEFAULT_MAX_REQUEST_ID_BYTES,
  InvalidRequestIdError,
  requestIdFromBytes,
  validateRequestId,
} from './ids/requestId.js';
export { uuidv7 } from './ids/uuidv7.js';
// Observability
export { type Clock, monotonicClock } from './observability/clock.js';
export type { ConsumerEventName, ConsumerEvents } from './observability/events.js';
export { type Logger, silentLogger } from './observability/logger.js';
// Options
export { OptionsCheck } from './options/OptionsCheck.js';
export type {
  StandardSchemaIssue,
  StandardSchemaResult,
  StandardSchemaV1,
} from './options/standardSchema.js';
// Store
export {
  MEMORY_STORE_DEFAULTS,
  type MemoryStoreOptions,
  memoryStore,
} from './store/memoryStore.js';
export { assertResultFits, DEFAULT_MAX_RESULT_BYTES } from './store/resultLimit.js';
export {
  type ClaimedOutcome,
  type ClaimOutcome,
  type ClaimRequest,
  type CompleteRequest,
  type FailRequest,
  type FencedRequest,
  type IdempotencyRecord,
  type RecordId,
  type RecordState,
  RecordStates,
  type RenewRequest,
  type Store,
  type StoredError,
  type TransitionOutcome,
} from './store/Store.js';
// Timing
export { EarliestTimer } from './timing/earliestTimer.js';
export { checkSubscribeRequest } from './transport/checkSubscribeRequest.js';
// Transport
export { encodeBody } from './transport/encodeBody.js';
export {
  MemoryBroker,
  type MemoryQueueStats,
  memoryBroker,
  type StoredMessage,
} from './transport/memoryBroker.js';
export {
  MEMORY_TRANSPORT_DEFAULTS,
  type MemoryTransport,
  type MemoryTransportOptions,
  memoryTransport,
  TransportClosedError,
} from './transport/memoryTransport.js';
export {
  type NativeSettlement,
  OnceSettlement,
  type Settlement,
  settledDelivery,
  settleOnce,
} from './transport/settleOnce.js';
export {
  type AttemptSource,
  type Capabilities,
  DeadLetterHeaders,
  type Delivery,
  type Health,
  type IncomingMessage,
  type OutgoingMessage,
  type PublishReceipt,
  type RejectOptions,
  type RetryOptions,
  type SubscribeRequest,
  type Subscription,
  type Transport,
} from './transport/Transport.js';
