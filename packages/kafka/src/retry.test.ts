import { DeadLetterHeaders, WireNames } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import type { FetchedMessage } from './client.js';
import { deadLetterRecord } from './deadLetter.js';
import { FormerKafkaHeaders, KafkaHeaders, readHeaders } from './headers.js';
import type { LaneMessage } from './partitionWorker.js';
import { readRetryHeaders, retryRecord } from './retry.js';

function fetched(headers: FetchedMessage['headers']): FetchedMessage {
  return { offset: '7', key: Buffer.from('k'), value: Buffer.from('v'), headers, timestamp: '1' };
}

function laneMessage(record: FetchedMessage, attempt: number): LaneMessage {
  return { offset: 7n, record, seq: 0, timestampMs: 1, attempt, redelivered: false, notBefore: 0 };
}

describe('retry-topic headers', () => {
  it("are core's wire names", () => {
    expect(KafkaHeaders).toMatchObject({
      requestId: WireNames.requestId,
      retryAttempt: WireNames.attempt,
      retryNotBefore: WireNames.notBefore,
      retryGroup: WireNames.group,
    });
  });

  it('a retry record carries the next attempt, the not-before time and the group', () => {
    const record = retryRecord(laneMessage(fetched({ app: 'x' }), 2), 5_000, 'g');
    expect(record.headers).toEqual({
      app: 'x',
      [WireNames.notBefore]: '5000',
      [WireNames.attempt]: '3',
      [WireNames.group]: 'g',
    });
    expect(readRetryHeaders(record.headers)).toEqual({
      attempt: 3,
      notBefore: 5_000,
      groupId: 'g',
    });
  });

  it('reads a record retried before the upgrade, under the former names', () => {
    const before = {
      [FormerKafkaHeaders.retryAttempt]: Buffer.from('4'),
      [FormerKafkaHeaders.retryNotBefore]: Buffer.from('9000'),
      [FormerKafkaHeaders.retryGroup]: Buffer.from('billing'),
    };
    expect(readRetryHeaders(before)).toEqual({ attempt: 4, notBefore: 9_000, groupId: 'billing' });
    // Hidden from handlers, as the current names are.
    expect(
      readHeaders({ ...before, app: Buffer.from('x') }, KafkaHeaders.requestId).headers,
    ).toEqual({ app: 'x' });
  });

  it('retrying such a record again writes the current names only', () => {
    const before = fetched({
      [FormerKafkaHeaders.retryAttempt]: Buffer.from('4'),
      [FormerKafkaHeaders.retryGroup]: Buffer.from('billing'),
    });
    const record = retryRecord(laneMessage(before, 4), 1_000, 'billing');
    expect(Object.keys(record.headers).sort()).toEqual(
      [WireNames.attempt, WireNames.group, WireNames.notBefore].sort(),
    );
    expect(readRetryHeaders(record.headers).attempt).toBe(5);
  });
});

describe('deadLetterRecord', () => {
  it("says why with core's dead-letter headers, and where the record was consumed", () => {
    const record = deadLetterRecord(
      fetched({ app: 'x' }),
      { topic: 't', partition: 2, offset: '7' },
      't',
      { reason: 'x'.repeat(10_000), code: 'IDEMQ_ERR_MAX_ATTEMPTS' },
      3,
    );
    expect(record.headers).toMatchObject({
      app: 'x',
      [DeadLetterHeaders.code]: 'IDEMQ_ERR_MAX_ATTEMPTS',
      [DeadLetterHeaders.attempts]: '3',
      [DeadLetterHeaders.source]: 't',
      [KafkaHeaders.originalTopic]: 't',
      [KafkaHeaders.originalPartition]: '2',
      [KafkaHeaders.originalOffset]: '7',
    });
    expect(String(record.headers[DeadLetterHeaders.reason])).toHaveLength(4_096);
  });
});
