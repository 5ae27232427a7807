import { IdemqError, PublishFailedError, TransportUnavailableError } from '@idemq/core';
import type { ProducedRecord } from './client.js';

/** Core's, so that one check catches them from every adapter. */
export { PublishFailedError, TransportUnavailableError };

/** Bytes of a record as the broker's size limit counts them, near enough: value, key, headers. */
export function recordBytes(record: ProducedRecord): number {
  let bytes = (record.value?.byteLength ?? 0) + byteLength(record.key);
  for (const [name, value] of Object.entries(record.headers)) {
    bytes += Buffer.byteLength(name);
    for (const part of Array.isArray(value) ? value : [value]) bytes += byteLength(part);
  }
  return bytes;
}

function byteLength(value: string | Buffer | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
}

/** Throws `PublishFailedError` (`too-large`) when `record` is over `maxBytes`. */
export function assertRecordFits(
  topic: string,
  record: ProducedRecord,
  maxBytes: number,
  requestId: string,
): void {
  const bytes = recordBytes(record);
  if (bytes > maxBytes) {
    throw new PublishFailedError(
      `The record for topic "${topic}" is ${bytes} bytes (value, key and headers), over the ` +
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
