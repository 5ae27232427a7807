import { WireNames } from '@idemq/core';
import {
  type CloudEventIdentity,
  cloudEventIdentity,
  requestIdFromBytes,
} from '@idemq/core/adapter';
import type { HeaderValue, ProducedHeaderValue } from './client.js';
import { CloudEventsHeaders } from './cloudEvents.js';

/** Headers the Kafka transport reads and writes besides the user's own (core's wire names). */
export const KafkaHeaders = {
  /** Default header carrying the requestId (configurable with `requestIdHeader`). */
  requestId: WireNames.requestId,
  /** The body's content type, as in the CloudEvents Kafka binding. */
  contentType: 'content-type',
  /** Where a dead letter was consumed from. */
  originalTopic: WireNames.originalTopic,
  originalPartition: WireNames.originalPartition,
  originalOffset: WireNames.originalOffset,
  /** Retry topics: not to be delivered before this epoch-ms time. */
  retryNotBefore: WireNames.notBefore,
  /** Retry topics: the attempt the next delivery is. */
  retryAttempt: WireNames.attempt,
  /** Retry topics: the Kafka group that retries it; other groups of the source skip it. */
  retryGroup: WireNames.group,
} as const;

/**
 * The names retry-topic records carried before core's wire names. Still read, so that a record
 * retried before an upgrade keeps its attempt, delay and group after it.
 */
export const FormerKafkaHeaders = {
  retryNotBefore: 'x-idemq-retry-not-before',
  retryAttempt: 'x-idemq-retry-attempt',
  retryGroup: 'x-idemq-retry-group',
} as const;

/** Bookkeeping headers of retry topics, current and former, hidden from handlers. */
const HIDDEN = new Set<string>([
  KafkaHeaders.retryNotBefore,
  KafkaHeaders.retryAttempt,
  KafkaHeaders.retryGroup,
  ...Object.values(FormerKafkaHeaders),
]);

/** What the transport makes of a record's headers. */
export interface ReadHeaders {
  /** As found: a string, the bytes when they are not valid UTF-8, several values, or nothing. */
  requestId: unknown;
  contentType?: string;
  /** The CloudEvents `ce_id` and `ce_source` headers as found (also left in `headers`). */
  cloudEvent?: CloudEventIdentity;
  /** Every other header as UTF-8 text (the last value when a header repeats). */
  headers: Record<string, string>;
}

/**
 * Reads the requestId, content type and user headers of a fetched record. Never throws: a bad
 * requestId (absent, empty, not UTF-8, repeated) goes to the engine as found, which dead-letters
 * it with a typed reason.
 */
export function readHeaders(
  raw: Readonly<Record<string, HeaderValue>> | undefined,
  requestIdHeader: string,
): ReadHeaders {
  const headers: Record<string, string> = {};
  const read: ReadHeaders = { requestId: undefined, headers };
  if (raw === undefined) return read;
  for (const name of Object.keys(raw)) {
    const value = raw[name];
    if (value === undefined) continue;
    if (name === requestIdHeader) read.requestId = requestIdValue(value);
    else if (name === KafkaHeaders.contentType) read.contentType = headerText(value);
    else if (!HIDDEN.has(name)) headers[name] = headerText(value);
  }
  const cloudEvent = cloudEventIdentity(
    rawValue(raw[CloudEventsHeaders.id]),
    rawValue(raw[CloudEventsHeaders.source]),
  );
  if (cloudEvent !== undefined) read.cloudEvent = cloudEvent;
  return read;
}

function rawValue(value: HeaderValue): unknown {
  return value === undefined ? undefined : requestIdValue(value);
}

function requestIdValue(value: Exclude<HeaderValue, undefined>): unknown {
  if (typeof value === 'string' || Array.isArray(value)) return value; // arrays: ambiguous, refused
  try {
    return requestIdFromBytes(value);
  } catch {
    return new Uint8Array(value); // invalid UTF-8: the engine refuses it with its own error
  }
}

/** A header value as text: bytes decoded as UTF-8, the last of repeated values. */
export function headerText(value: Exclude<HeaderValue, undefined>): string {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  if (last === undefined) return '';
  return typeof last === 'string' ? last : last.toString('utf8');
}

/** Headers of a published record: the user's, then the requestId and content type. */
export function writeHeaders(
  user: Readonly<Record<string, string>> | undefined,
  requestIdHeader: string,
  requestId: string,
  contentType: string | undefined,
): Record<string, string> {
  return {
    ...user,
    [requestIdHeader]: requestId,
    ...(contentType === undefined ? {} : { [KafkaHeaders.contentType]: contentType }),
  };
}

/**
 * A record's headers as they can be produced again (dead letters, retry topics), unchanged but
 * for the names in `drop`.
 */
export function copyHeaders(
  raw: Readonly<Record<string, HeaderValue>> | undefined,
  drop: ReadonlySet<string> = NOTHING,
): Record<string, ProducedHeaderValue> {
  const copy: Record<string, ProducedHeaderValue> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (value !== undefined && !drop.has(name)) copy[name] = value;
  }
  return copy;
}

const NOTHING: ReadonlySet<string> = new Set();
