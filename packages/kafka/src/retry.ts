import type { HeaderValue, ProducedRecord } from './client.js';
import { copyHeaders, FormerKafkaHeaders, headerText, KafkaHeaders } from './headers.js';
import type { LaneMessage } from './partitionWorker.js';

/**
 * Retries. Kafka has no per-message delay, so the transport builds one of two kinds:
 *
 * - `in-place` (default): the message stays in the consumer's buffer and is handed out again
 *   after the delay. In order (`partitionConcurrency` 1) the partition waits for it: the key's
 *   order survives the retry, and so does every other key of the partition (head-of-line). With
 *   more in flight per partition, the message steps aside and the partition flows on; the commit
 *   stays below it until it is done.
 * - `topic`: the message is produced to `<source><retryTopicSuffix>` with a not-before time, its
 *   next attempt and its consumer group in headers (acks: -1), and only then is its offset
 *   committed. The same subscription consumes the retry topic, waiting for each message's
 *   not-before; other groups of the source, which read the same retry topic, skip it. The source
 *   partition never blocks; the key's order is lost across a retry.
 */
export type RetryMode = 'in-place' | 'topic';

const FORMER_NAMES: ReadonlySet<string> = new Set(Object.values(FormerKafkaHeaders));

/** The retry topic of `source`. */
export function retryTopicOf(source: string, suffix: string): string {
  return source + suffix;
}

/** The record that carries `message` to the retry topic for `groupId`, due at `notBefore` (epoch ms). */
export function retryRecord(
  message: LaneMessage,
  notBefore: number,
  groupId: string,
): ProducedRecord {
  const { record } = message;
  return {
    key: record.key,
    value: record.value,
    headers: {
      // A record retried before the upgrade loses its former names: the current ones replace them.
      ...copyHeaders(record.headers, FORMER_NAMES),
      [KafkaHeaders.retryNotBefore]: String(notBefore),
      [KafkaHeaders.retryAttempt]: String(message.attempt + 1),
      [KafkaHeaders.retryGroup]: groupId,
    },
  };
}

/**
 * The attempt, not-before and group a retry topic's record carries (attempt 1 and not-before 0
 * when absent or garbled).
 */
export function readRetryHeaders(headers: Readonly<Record<string, HeaderValue>> | undefined): {
  attempt: number;
  notBefore: number;
  groupId: string;
} {
  const read = (name: keyof typeof FormerKafkaHeaders) =>
    text(headers?.[KafkaHeaders[name]] ?? headers?.[FormerKafkaHeaders[name]]);
  const attempt = Number(read('retryAttempt'));
  const notBefore = Number(read('retryNotBefore'));
  return {
    attempt: Number.isSafeInteger(attempt) && attempt >= 1 ? attempt : 1,
    notBefore: Number.isFinite(notBefore) && notBefore > 0 ? notBefore : 0,
    groupId: read('retryGroup'),
  };
}

function text(value: HeaderValue): string {
  return value === undefined ? '' : headerText(value);
}
