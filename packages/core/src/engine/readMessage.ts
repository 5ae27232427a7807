import { isIdemqError } from '../errors/idemqError.js';
import { InvalidPayloadError, MalformedPayloadError } from '../errors/message.js';
import { requestIdOfCloudEvent } from '../ids/cloudEvents.js';
import { requestIdFromBytes, validateRequestId } from '../ids/requestId.js';
import type { StandardSchemaResult, StandardSchemaV1 } from '../options/standardSchema.js';
import type { IncomingMessage } from '../transport/transport.js';
import { decodeByContentType } from './decodeByContentType.js';
import type { RequestIdSource } from './types.js';

/**
 * The requestId of an incoming message: with `from: 'cloudevents'`, its CloudEvent's
 * (source, id) when it carries one; else the transport's, or a derived one when none is present.
 * Bytes are decoded strictly (invalid UTF-8 is an error, never replaced).
 */
export function readRequestId(
  message: IncomingMessage,
  maxBytes: number,
  derive?: (message: IncomingMessage) => string | undefined,
  from: RequestIdSource = 'transport',
): string {
  if (from === 'cloudevents' && message.cloudEvent) {
    return requestIdOfCloudEvent(message.cloudEvent, maxBytes);
  }
  let raw = message.requestId;
  if (raw instanceof Uint8Array) raw = requestIdFromBytes(raw);
  if ((raw === undefined || raw === null || raw === '') && derive) raw = derive(message);
  return validateRequestId(raw, maxBytes);
}

/**
 * Decodes and validates a body; throws typed payload errors. Synchronous unless a schema
 * validates asynchronously: an `await` per message costs a promise and a microtask turn.
 */
export function readPayload<T>(
  message: IncomingMessage,
  decode: ((body: Uint8Array, message: IncomingMessage) => T) | undefined,
  schema: StandardSchemaV1<unknown, T> | undefined,
): T | Promise<T> {
  let value: unknown;
  try {
    value = decode
      ? decode(message.body, message)
      : decodeByContentType(message.body, message.contentType);
  } catch (error) {
    if (isIdemqError(error)) throw error;
    throw new MalformedPayloadError(error instanceof Error ? error.message : String(error), error);
  }
  if (!schema) return value as T;
  const validated = schema['~standard'].validate(value);
  return isPromiseLike(validated)
    ? Promise.resolve(validated).then(validOrThrow)
    : validOrThrow(validated);
}

function isPromiseLike<V>(value: V | PromiseLike<V>): value is PromiseLike<V> {
  return typeof (value as { then?: unknown }).then === 'function';
}

function validOrThrow<T>(outcome: StandardSchemaResult<T>): T {
  if (outcome.issues) {
    throw new InvalidPayloadError(
      outcome.issues.map((issue) => {
        const path = issue.path
          ?.map((part) => String(typeof part === 'object' ? part.key : part))
          .join('.');
        return path ? `${path}: ${issue.message}` : issue.message;
      }),
    );
  }
  return outcome.value;
}
