import { ErrorCodes } from '../errors/codes.js';
import { InvalidRequestIdError } from '../errors/message.js';

/** Default upper bound on a requestId, in UTF-8 bytes. */
export const DEFAULT_MAX_REQUEST_ID_BYTES = 512;

/**
 * Checks a requestId as it came off the wire. Returns it unchanged when valid; throws a typed
 * error otherwise. Never trims or normalises: two ids are the same only when their bytes are.
 * Refused: a missing, empty or blank id (`REQUEST_ID_MISSING`); one that is not a string, holds
 * a lone surrogate or a control character (Unicode category Cc: C0, DEL, C1)
 * (`REQUEST_ID_INVALID`); one over `maxBytes` in UTF-8 (`REQUEST_ID_TOO_LONG`).
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
  const control = controlCharacterAt(value);
  if (control >= 0) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `requestId contains a control character (U+${codeOf(value, control)} at index ${control})`,
    );
  }
  // Bytes as the id travels (UTF-8), not UTF-16 code units: the limit is what a header carries.
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

/**
 * Index of the first control character (U+0000–U+001F, U+007F–U+009F: Unicode category Cc),
 * or -1. A loop, not a regular expression: it runs for every message.
 */
export function controlCharacterAt(value: string): number {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return i;
  }
  return -1;
}

function codeOf(value: string, index: number): string {
  return value.charCodeAt(index).toString(16).toUpperCase().padStart(4, '0');
}
