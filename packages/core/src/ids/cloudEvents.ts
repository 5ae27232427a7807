import { hash } from 'node:crypto';
import { ErrorCodes } from '../errors/codes.js';
import { InvalidRequestIdError } from '../errors/message.js';
import {
  controlCharacterAt,
  DEFAULT_MAX_REQUEST_ID_BYTES,
  requestIdFromBytes,
  validateRequestId,
} from './requestId.js';

/**
 * The CloudEvents binary-mode `id` and `source` of a message, as found under its broker's
 * binding names (a string, bytes, or nothing). Adapters translate the names; core decides.
 */
export interface CloudEventIdentity {
  id: unknown;
  source: unknown;
}

/** What an adapter puts in `IncomingMessage.cloudEvent`: nothing when neither was found. */
export function cloudEventIdentity(id: unknown, source: unknown): CloudEventIdentity | undefined {
  return id === undefined && source === undefined ? undefined : { id, source };
}

const HASHED_PREFIX = 'ce-sha256:';

/**
 * The requestId of a CloudEvent. CloudEvents are duplicates when their (source, id) pairs are
 * equal, so both go in, length-prefixed so that no two pairs give one id:
 * `ce:<UTF-8 byte length of source>:<source>:<id>`. When that is longer than `maxBytes`, it is
 * `ce-sha256:` and the SHA-256 (hex) of that text instead: 74 bytes, one per pair.
 * @example cloudEventsRequestId('/orders', 'A-1') // 'ce:7:/orders:A-1'
 */
export function cloudEventsRequestId(
  source: string,
  id: string,
  maxBytes = DEFAULT_MAX_REQUEST_ID_BYTES,
): string {
  checkPart('source', source);
  checkPart('id', id);
  const joined = `ce:${Buffer.byteLength(source, 'utf8')}:${source}:${id}`;
  if (Buffer.byteLength(joined, 'utf8') <= maxBytes) return joined;
  return HASHED_PREFIX + hash('sha256', joined, 'hex');
}

/**
 * The requestId of a message's CloudEvent identity, validated against `maxBytes`.
 * @throws InvalidRequestIdError when the id or the source is missing, empty or not text.
 */
export function requestIdOfCloudEvent(identity: CloudEventIdentity, maxBytes: number): string {
  const source = partOf('source', identity.source);
  const id = partOf('id', identity.id);
  return validateRequestId(cloudEventsRequestId(source, id, maxBytes), maxBytes);
}

function partOf(name: string, value: unknown): string {
  const text = value instanceof Uint8Array ? requestIdFromBytes(value) : value;
  if (text === undefined || text === null || text === '') {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_MISSING,
      `CloudEvents message has no ${name} (both id and source are required)`,
    );
  }
  if (typeof text !== 'string') {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `CloudEvents ${name} must be a string, got ${typeof text}`,
    );
  }
  return text;
}

function checkPart(name: string, value: string): void {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_MISSING,
      `CloudEvents ${name} must be a non-empty string`,
    );
  }
  // A lone surrogate becomes U+FFFD when hashed: two distinct ids would collide.
  if (!value.isWellFormed()) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `CloudEvents ${name} is not well-formed Unicode (lone surrogate)`,
    );
  }
  // Checked here too: a pair over the size limit is hashed, which would hide one.
  if (controlCharacterAt(value) >= 0) {
    throw new InvalidRequestIdError(
      ErrorCodes.REQUEST_ID_INVALID,
      `CloudEvents ${name} contains a control character`,
    );
  }
}
