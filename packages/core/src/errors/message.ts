import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

/** A requestId that is missing, empty, not a string, not valid text or too long. */
export class InvalidRequestIdError extends IdemqError {
  constructor(
    code:
      | typeof ErrorCodes.REQUEST_ID_MISSING
      | typeof ErrorCodes.REQUEST_ID_INVALID
      | typeof ErrorCodes.REQUEST_ID_TOO_LONG,
    message: string,
  ) {
    super(code, message, { retriable: false });
  }
}

/** The body could not be decoded. */
export class MalformedPayloadError extends IdemqError {
  constructor(detail: string, cause?: unknown) {
    super(ErrorCodes.PAYLOAD_MALFORMED, `Payload could not be decoded: ${detail}`, { cause });
  }
}

/** The decoded body failed schema validation; `issues` says where. */
export class InvalidPayloadError extends IdemqError {
  readonly issues: readonly string[];
  constructor(issues: readonly string[]) {
    super(ErrorCodes.PAYLOAD_INVALID, `Payload failed validation: ${issues.join('; ')}`);
    this.issues = issues;
  }
}

/**
 * A delivered body over the consumer's `maxPayloadBytes`: a producer that is not idemq sent
 * what idemq's own publish would have refused. Dead-lettered before it is decoded.
 */
export class OversizedPayloadError extends IdemqError {
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(bytes: number, maxBytes: number) {
    super(
      ErrorCodes.PAYLOAD_TOO_LARGE,
      `Payload is ${bytes} bytes, over the consumer's ${maxBytes}-byte limit (maxPayloadBytes)`,
      { retriable: false },
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/**
 * A payload given to `run()` that `fingerprint` cannot encode canonically (a BigInt, a function,
 * a cycle, a `Date` or other non-plain object, a number that is not finite). `path` says where,
 * as in `payload.items[2].price`. Nothing was claimed or run.
 */
export class PayloadNotFingerprintableError extends IdemqError {
  readonly path: string;
  constructor(path: string, what: string) {
    super(
      ErrorCodes.PAYLOAD_NOT_FINGERPRINTABLE,
      `Cannot fingerprint the payload: ${path} is ${what}. Pass plain objects, arrays, strings, ` +
        'finite numbers, booleans and null (JSON values), or the payload as a string or bytes',
      { retriable: false },
    );
    this.path = path;
  }
}
