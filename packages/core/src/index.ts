// The main entry point: what applications use. Adapter authors' pieces: ./adapter/index.ts.
// Engine
export { backoffDelayMs } from './engine/backoff.js';
export { type Consumer, createConsumer } from './engine/createConsumer.js';
export { createIdempotency, type Idempotency } from './engine/createIdempotency.js';
export { type Decision, type DecisionPolicy, decide } from './engine/decide.js';
export {
  type BodyKind,
  bodyKindOf,
  decodeByContentType,
  type MediaType,
  parseMediaType,
} from './engine/decodeByContentType.js';
export {
  CONSUMER_DEFAULTS,
  IDEMPOTENCY_DEFAULTS,
  RETRY_DEFAULTS,
} from './engine/defaults.js';
export type { StopReport } from './engine/dispatch.js';
export { jsonSerializer } from './engine/serializer.js';
export type {
  AbortPolicy,
  BatchContext,
  BatchHandler,
  BatchItem,
  BatchResults,
  ConsumedMessage,
  ConsumerOptions,
  ConsumerSettings,
  Handler,
  HandlerContext,
  HandlerTransaction,
  IdempotencyOptions,
  RequestIdSource,
  ResultSerializer,
  RetryPolicy,
  RunOptions,
  RunOutcome,
  TransactionTypes,
} from './engine/types.js';
// Errors
export {
  BatchResultsInvalidError,
  ConsumerStateError,
  type ErrorCode,
  ErrorCodes,
  HandlerFailedError,
  IdemqError,
  type IdemqErrorOptions,
  InvalidOptionsError,
  InvalidPayloadError,
  InvalidRequestIdError,
  isIdemqError,
  MalformedPayloadError,
  NonRetriableError,
  OversizedPayloadError,
  PayloadNotFingerprintableError,
  type PublishFailedDetails,
  PublishFailedError,
  type PublishFailure,
  ResultNotSerializableError,
  ResultTooLargeError,
  StoreClosedError,
  StoreRejectedError,
  type StoreRejection,
  StoreUnavailableError,
  type StoreUnavailableReason,
  TransportClosedError,
  TransportUnavailableError,
} from './errors/index.js';
// Ids
export { cloudEventsRequestId } from './ids/cloudEvents.js';
export { type FingerprintablePayload, fingerprint } from './ids/fingerprint.js';
export { DEFAULT_MAX_REQUEST_ID_BYTES } from './ids/requestId.js';
export { uuidv7 } from './ids/uuidv7.js';
// Observability
export { type Clock, monotonicClock } from './observability/clock.js';
export type { ConsumerEventName, ConsumerEvents } from './observability/events.js';
export { type Logger, silentLogger } from './observability/logger.js';
// Options
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
export { DEFAULT_MAX_RESULT_BYTES } from './store/resultLimit.js';
export {
  type ClaimedOutcome,
  type ClaimOutcome,
  type ClaimRequest,
  type CompleteRequest,
  type FailRequest,
  type FencedRequest,
  type IdempotencyRecord,
  isTransactionalStore,
  type RecordId,
  type RecordState,
  RecordStates,
  type RenewRequest,
  type ResultOmission,
  type SettledTransition,
  type Store,
  type StoredError,
  type StoreTransaction,
  type TransactionalStore,
  type TransitionOutcome,
} from './store/store.js';
// Transport
export { DeadLetterHeaders } from './transport/deadLetterHeaders.js';
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
} from './transport/memoryTransport.js';
export type {
  AttemptSource,
  Capabilities,
  Delivery,
  Health,
  IncomingMessage,
  OutgoingMessage,
  PublishReceipt,
  RejectOptions,
  RetryOptions,
  SubscribeRequest,
  Subscription,
  Transport,
} from './transport/transport.js';
export { type WireName, WireNames } from './transport/wireNames.js';
