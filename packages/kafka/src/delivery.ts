import type { IncomingMessage } from '@idemq/core';
import { readHeaders } from './headers.js';
import type { LaneMessage, PartitionLane } from './partitionWorker.js';

/** What `message.raw` holds for a Kafka delivery. */
export interface KafkaRawMessage {
  topic: string;
  partition: number;
  offset: string;
  /** The record as the client fetched it. */
  record: LaneMessage['record'];
}

const EMPTY = new Uint8Array(0);

/**
 * The message a delivery carries. `attempt` is this process's count (retries it made, or the
 * retry topic's header): Kafka keeps none, and the engine's real count is the idempotency
 * record's. `redelivered` is true when the message was in the partition before this member took
 * it over (the previous owner may have had it) or when it comes back after a retry or release.
 */
export function incomingMessage(
  lane: PartitionLane,
  message: LaneMessage,
  requestIdHeader: string,
): IncomingMessage {
  const { record } = message;
  const { requestId, headers, contentType } = readHeaders(record.headers, requestIdHeader);
  const takenOver = lane.takeoverEnd !== undefined && message.offset < lane.takeoverEnd;
  const publishedAt = Number(record.timestamp);
  const raw: KafkaRawMessage = {
    topic: lane.topic,
    partition: lane.partition,
    offset: record.offset,
    record,
  };
  return {
    requestId,
    body: record.value ?? EMPTY,
    headers,
    source: lane.source,
    ...(record.key === null ? {} : { key: record.key.toString('utf8') }),
    ...(contentType === undefined ? {} : { contentType }),
    ...(Number.isFinite(publishedAt) && publishedAt > 0 ? { publishedAt } : {}),
    attempt: message.attempt,
    attemptSource: 'emulated',
    redelivered: message.redelivered || takenOver,
    raw,
  };
}
