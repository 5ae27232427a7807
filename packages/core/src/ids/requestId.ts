import { ErrorCodes } from '../errors/codes.js';
import { InvalidRequestIdError } from '../errors/message.js';

/** Default upper bound on a requestId, in UTF-8 bytes. */
export const DEFAULT_MAX_REQUEST_ID_BYTES = 512;

/**
 * Checks a requestId as it came off the wire. Returns it unchanged when valid; throws a typed
 * error otherwise. Never trims or normalises: two ids are the same only when their bytes are.
 */
export function validateRequestId(value: unknown, maxBytes = DEFAULT_MAX_REQUEST_ID_BYTES): string {
  if (value === undefined || value === null) {
    throw new InvalidRequestIdError(ErrorCodes.REQUEST_ID_MISSING, 'Message has no requestId');
  }
  if (typeof value !== 'string') {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `requestId must be a string, got ${typeof value}`,
    );
  }
  if (value.trim().length === 0) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_MISSING,
      'requestId is empty or whitespace only',
    );
  }
  // Lone surrogates cannot be encoded as UTF-8 and would silently collide after encoding.
  if (!value.isWellFormed()) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      'requestId is not well-formed Unicode (lone surrogate)',
    );
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_TOO_LONG,
      `requestId is ${bytes} bytes, over the ${maxBytes}-byte limit`,
    );
  }
  return value;
}

/**
 * Decodes a requestId carried as bytes (a Kafka header, say). Invalid UTF-8 is refused rather
 * than replaced with U+FFFD, which would make distinct ids collide.
 */
export function requestIdFromBytes(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidRequestIdError(ErrorCodes.REQUEST_ID_INVALID, 'requestId is not valid UTF-8');
  }
}
