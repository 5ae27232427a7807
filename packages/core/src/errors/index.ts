export { type ErrorCode, ErrorCodes } from './codes.js';
export {
  ConsumerStateError,
  HandlerFailedError,
  InvalidOptionsError,
  KeyReuseError,
  LeaseLostError,
  MaxAttemptsError,
  NonRetriableError,
  ResultTooLargeError,
  StoreClosedError,
  StoreUnavailableError,
  TransportUnavailableError,
  toError,
} from './errors.js';
export { IdemqError, type IdemqErrorOptions, isIdemqError } from './IdemqError.js';
