export { type ErrorCode, ErrorCodes } from './codes.js';
export {
  HandlerFailedError,
  InvalidOptionsError,
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
} from './errors.js';
export { IdemqError, type IdemqErrorOptions, isIdemqError } from './IdemqError.js';
