import type { RejectOptions } from '@idemq/core';
import { deadLetterHeaders } from '@idemq/core/adapter';
import type { FetchedMessage, ProducedRecord } from './client.js';
import { copyHeaders, KafkaHeaders } from './headers.js';

/** Where a dead-lettered record was consumed from. */
export interface RecordOrigin {
  topic: string;
  partition: number;
  offset: string;
}

/**
 * The dead letter of a record: the same key, value and headers, plus why (`x-idemq-reason`,
 * `-code`, `-attempts`, `-source`) and where it was consumed from (`x-idemq-original-topic`,
 * `-partition`, `-offset`). Kafka has no dead-letter queue: the transport produces this to
 * `<source><deadLetterSuffix>` with `acks: -1` and commits the original only afterwards.
 */
export function deadLetterRecord(
  record: FetchedMessage,
  origin: RecordOrigin,
  source: string,
  options: RejectOptions,
  attempts: number,
): ProducedRecord {
  return {
    key: record.key,
    value: record.value,
    headers: {
      ...copyHeaders(record.headers),
      ...deadLetterHeaders(options, { source, attempts }),
      [KafkaHeaders.originalTopic]: origin.topic,
      [KafkaHeaders.originalPartition]: String(origin.partition),
      [KafkaHeaders.originalOffset]: origin.offset,
    },
  };
}
