export { type ErrorCode, ErrorCodes } from './codes.js';
export {
  BatchResultsInvalidError,
  HandlerFailedError,
  NonRetriableError,
  toError,
} from './handler.js';
export { IdemqError, type IdemqErrorOptions, isIdemqError } from './idemqError.js';
export {
  InvalidPayloadError,
  InvalidRequestIdError,
  MalformedPayloadError,
  OversizedPayloadError,
  PayloadNotFingerprintableError,
} from './message.js';
export {
  ResultNotSerializableError,
  ResultTooLargeError,
  StoreClosedError,
  StoreRejectedError,
  type StoreRejection,
  StoreUnavailableError,
  type StoreUnavailableReason,
} from './store.js';
export {
  type PublishFailedDetails,
  PublishFailedError,
  type PublishFailure,
  TransportClosedError,
  TransportUnavailableError,
} from './transport.js';
export { ConsumerStateError, InvalidOptionsError } from './usage.js';
