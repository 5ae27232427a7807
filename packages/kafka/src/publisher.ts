import { type OutgoingMessage, uuidv7 } from '@idemq/core';
import { encodeBody, validateRequestId } from '@idemq/core/adapter';
import type { ProducedRecord } from './client.js';
import { writeHeaders } from './headers.js';

/**
 * The record `publish` produces: the body's bytes as the value, the message key as the Kafka key
 * (the partitioner keeps one key on one partition, hence in order), and the requestId and content
 * type in headers. A missing requestId becomes a new UUIDv7; a given one is validated first.
 */
export function publishedRecord(
  message: OutgoingMessage,
  requestIdHeader: string,
): { record: ProducedRecord; requestId: string } {
  const requestId =
    message.requestId === undefined ? uuidv7() : validateRequestId(message.requestId);
  const { bytes, contentType } = encodeBody(message);
  return {
    requestId,
    record: {
      key: message.key ?? null,
      value: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      headers: writeHeaders(message.headers, requestIdHeader, requestId, contentType),
    },
  };
}
