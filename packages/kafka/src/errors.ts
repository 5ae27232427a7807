import { IdemqError, PublishFailedError, TransportUnavailableError } from '@idemq/core';
import type { ProducedRecord } from './client.js';

/** Core's, so that one check catches them from every adapter. */
export { PublishFailedError, TransportUnavailableError };

/**
 * Bytes of the record batch (format v2, uncompressed) that carries `record` alone, which is what
 * the broker's `message.max.bytes` / the topic's `max.message.bytes` limit: the batch header,
 * then the record with its varint-framed key, value and headers.
 */
export function recordBatchBytes(record: ProducedRecord): number {
  // attributes (1 byte), timestampDelta 0 and offsetDelta 0 (a one-byte varint each)
  let body = 3 + field(record.key) + field(record.value);
  let count = 0;
  for (const [name, value] of Object.entries(record.headers)) {
    for (const part of Array.isArray(value) ? value : [value]) {
      body += field(name) + field(part);
      count++;
    }
  }
  body += varintBytes(count);
  return RECORD_BATCH_HEADER_BYTES + varintBytes(body) + body;
}

/**
 * Offset, length, leader epoch, magic, CRC, attributes, last offset delta, two timestamps,
 * producer id and epoch, base sequence and record count.
 */
const RECORD_BATCH_HEADER_BYTES = 61;

/** A length-prefixed field of a record: its varint length (-1 for null), then its bytes. */
function field(value: string | Buffer | null | undefined): number {
  if (value === null || value === undefined) return varintBytes(-1);
  const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
  return varintBytes(bytes) + bytes;
}

/** Bytes of a zigzag-encoded varint, as Kafka records frame their numbers. */
function varintBytes(value: number): number {
  let zigzag = value >= 0 ? value * 2 : -value * 2 - 1;
  let bytes = 1;
  while (zigzag >= 0x80) {
    zigzag = Math.floor(zigzag / 0x80);
    bytes++;
  }
  return bytes;
}

/** Throws `PublishFailedError` (`too-large`) when `record` is over `maxBytes`. */
export function assertRecordFits(
  topic: string,
  record: ProducedRecord,
  maxBytes: number,
  requestId: string,
): void {
  const bytes = recordBatchBytes(record);
  if (bytes > maxBytes) {
    throw new PublishFailedError(
      `The record for topic "${topic}" is ${bytes} bytes as a record batch (value, key, headers and framing), over the ` +
        `${maxBytes}-byte limit (maxPayloadBytes; the broker's message.max.bytes)`,
      { failure: 'too-large', destination: topic, requestId },
    );
  }
}

/**
 * What a failed join throws: a topic the cluster does not know (kafkajs's protocol error
 * `UNKNOWN_TOPIC_OR_PARTITION`, untyped and nameless) as a `TransportUnavailableError` naming
 * the topics, and a coordinator still in transition after the subscription's rejoins as a
 * `TransportUnavailableError` too; anything else as it came.
 */
export function joinError(topics: readonly string[], error: unknown): unknown {
  if (isCoordinatorInTransition(error)) {
    return new TransportUnavailableError(
      `Kafka's group coordinator stayed unavailable through every join attempt ` +
        `(${(error as Error).message}); subscribe again later`,
      { cause: error },
    );
  }
  if ((error as { type?: unknown } | null)?.type !== 'UNKNOWN_TOPIC_OR_PARTITION') return error;
  const named = topics.map((topic) => `topic "${topic}"`).join(' or ');
  return new TransportUnavailableError(
    `Kafka does not know ${named} (UNKNOWN_TOPIC_OR_PARTITION): create it before subscribing ` +
      '(idemq creates its retry topics only). A broker that creates topics on first use may ' +
      'know it moments later.',
    { cause: error },
  );
}

/** kafkajs's names for a group coordinator that is moving, loading or removing the group. */
const COORDINATOR_IN_TRANSITION = new Set([
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_LOAD_IN_PROGRESS',
]);

/**
 * Whether `error` (or an error it wraps) says the group's coordinator is in transition: Kafka
 * answers a join with COORDINATOR_NOT_AVAILABLE while it removes an emptied group (after the
 * group's last topic was deleted, for one) and expects the member to find the coordinator and
 * join again. kafkajs gives up the join on these instead.
 */
export function isCoordinatorInTransition(error: unknown): boolean {
  for (let cause = error; cause; cause = (cause as { cause?: unknown }).cause) {
    const type = (cause as { type?: unknown }).type;
    if (typeof type === 'string' && COORDINATOR_IN_TRANSITION.has(type)) return true;
  }
  return false;
}

/** kafkajs's names for a broker that cannot be reached or stopped answering. */
const UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
]);

/**
 * What a failed publish or subscribe throws: a broker kafkajs could not reach, once its own
 * retries are spent, as a retriable `TransportUnavailableError` naming the brokers and the cause;
 * anything else, typed errors of the transport included, as it came.
 */
export function unreachableError(error: unknown, brokers: readonly string[] | undefined): unknown {
  if (error instanceof IdemqError) return error; // already typed (and worded) by the transport
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (!UNREACHABLE.has(cause.name)) continue;
    const where = brokers === undefined ? '' : ` at ${brokers.join(', ')}`;
    return new TransportUnavailableError(`Kafka${where} could not be reached: ${cause.message}`, {
      cause: error,
    });
  }
  return error;
}
