import { type IncomingMessage, WireNames } from '@idemq/core';
import type { ConsumeMessage, Message, Options } from 'amqplib';
import { cloudEventOf } from './cloudEvents.js';
import type { QueueType } from './options.js';

/**
 * Headers the transport writes for its own bookkeeping (core's wire names); consumers never see
 * them in `headers`. These are the names RabbitMQ copies carried before core named them too.
 */
export const InternalHeaders = {
  /** Attempt number of a copy the transport re-enqueued (retry, release). */
  attempt: WireNames.attempt,
  /** The message's ordering key: routing keys change on the way through retry tiers. */
  key: WireNames.key,
  /** The requestId when it does not fit the 255-byte `messageId` property. */
  requestId: WireNames.requestId,
  /** Epoch ms before which a delayed copy must not be handed out (delays beyond every tier). */
  notBefore: WireNames.notBefore,
  /** Epoch ms by which a copy in a retry tier is due back in its queue (see `TierSweeper`). */
  due: WireNames.due,
} as const;

const INTERNAL = new Set<string>(Object.values(InternalHeaders));

/**
 * Headers RabbitMQ adds while dead-lettering and counting deliveries. A copy the transport
 * publishes is a new message: carrying them over would corrupt its count (`x-delivery-count` is
 * only rewritten once the new message is redelivered) and grow its history on every retry.
 */
const BROKER_HISTORY = new Set([
  'x-death',
  'x-first-death-exchange',
  'x-first-death-queue',
  'x-first-death-reason',
  'x-last-death-exchange',
  'x-last-death-queue',
  'x-last-death-reason',
  'x-delivery-count',
  'x-acquired-count',
]);

/** AMQP `messageId` is a short string: at most 255 bytes. */
export const MAX_MESSAGE_ID_BYTES = 255;

/** The attempt of a delivery, and how the number was obtained. */
export interface AttemptInfo {
  attempt: number;
  exact: boolean;
}

/**
 * Attempt of a delivery: the attempt the transport stamped on its last copy (1 for a message as
 * published), plus the broker's count of returns since. Quorum queues count every return
 * (`x-delivery-count`: requeue, channel or connection loss), so the sum is exact. Classic queues
 * only flag a redelivery, so a message returned twice looks returned once: an estimate.
 */
export function attemptOf(message: Message, queueType: QueueType): AttemptInfo {
  const headers = message.properties.headers ?? {};
  const stamped = integerOf(headers[InternalHeaders.attempt]) ?? 1;
  if (queueType === 'quorum') {
    const returns = integerOf(headers['x-delivery-count']) ?? 0;
    return { attempt: Math.max(1, stamped) + Math.max(0, returns), exact: true };
  }
  return { attempt: Math.max(1, stamped) + (message.fields.redelivered ? 1 : 0), exact: false };
}

/**
 * The contract's view of a delivered message. The requestId is passed on raw (the engine
 * validates it): the `messageId` property, else the header fallback (a byte header stays bytes
 * so the engine can refuse invalid UTF-8), else nothing.
 */
export function toIncoming(
  message: ConsumeMessage,
  source: string,
  queueType: QueueType,
): IncomingMessage {
  const { properties, fields, content } = message;
  const raw = properties.headers ?? {};
  const { attempt, exact } = attemptOf(message, queueType);
  const key = raw[InternalHeaders.key];
  const contentType: unknown = properties.contentType;
  const cloudEvent = cloudEventOf(raw);
  const publishedAt = epochMsOf(properties.timestamp);
  return {
    requestId: requestIdOf(message),
    body: content,
    headers: visibleHeaders(raw),
    source,
    attempt,
    attemptSource: exact ? 'exact' : 'emulated',
    // A copy the transport re-enqueued was delivered before, though RabbitMQ sees a new message.
    redelivered: fields.redelivered || raw[InternalHeaders.attempt] !== undefined,
    raw: message,
    ...(typeof key === 'string' ? { key } : {}),
    ...(typeof contentType === 'string' ? { contentType } : {}),
    ...(cloudEvent === undefined ? {} : { cloudEvent }),
    ...(publishedAt === undefined ? {} : { publishedAt }),
  };
}

/** The requestId as found on the wire: `messageId`, else the header fallback. */
export function requestIdOf(message: Message): unknown {
  const messageId: unknown = message.properties.messageId;
  if (typeof messageId === 'string' && messageId.length > 0) return messageId;
  const header: unknown = message.properties.headers?.[InternalHeaders.requestId];
  if (typeof header === 'string') return header;
  if (header instanceof Uint8Array) return new Uint8Array(header);
  return messageId;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Application headers as strings. Numbers and booleans are stringified, byte values kept when
 * they are valid UTF-8; tables and arrays are left out. The broker's dead-letter history and
 * delivery count are left out too: every delayed retry passes a TTL queue and collects an
 * "expired" death, which says nothing about the message. `raw` still has all of them.
 */
export function visibleHeaders(raw: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (INTERNAL.has(name) || BROKER_HISTORY.has(name)) continue;
    if (typeof value === 'string') headers[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      headers[name] = String(value);
    } else if (value instanceof Uint8Array) {
      try {
        headers[name] = utf8.decode(value);
      } catch {
        // Not text: only on `raw`.
      }
    }
  }
  return headers;
}

/**
 * Properties for publishing a copy of `message` (retry, release, dead letter): its own
 * properties and headers, minus the broker's history and `drop`, plus `set`. Left out on
 * purpose: `expiration` (a copy must not expire inside a retry tier), `userId` (RabbitMQ
 * refuses one that is not the publishing connection's user).
 */
export function copyOptions(
  message: Message,
  change: { set?: Record<string, unknown>; drop?: readonly string[] },
): Options.Publish {
  const headers: Record<string, unknown> = {};
  const drop = new Set(change.drop ?? []);
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    if (!BROKER_HISTORY.has(name) && !drop.has(name)) headers[name] = value;
  }
  Object.assign(headers, change.set);
  const p = message.properties;
  const options: Options.Publish = { headers, persistent: true, mandatory: true };
  if (typeof p.messageId === 'string') options.messageId = p.messageId;
  if (typeof p.contentType === 'string') options.contentType = p.contentType;
  if (typeof p.contentEncoding === 'string') options.contentEncoding = p.contentEncoding;
  if (typeof p.correlationId === 'string') options.correlationId = p.correlationId;
  if (typeof p.replyTo === 'string') options.replyTo = p.replyTo;
  if (typeof p.type === 'string') options.type = p.type;
  if (typeof p.appId === 'string') options.appId = p.appId;
  if (typeof p.timestamp === 'number') options.timestamp = p.timestamp;
  if (typeof p.priority === 'number') options.priority = p.priority;
  return options;
}

/** AMQP timestamps are POSIX seconds; some publishers write milliseconds. */
function epochMsOf(timestamp: unknown): number | undefined {
  const value = typeof timestamp === 'bigint' ? Number(timestamp) : timestamp;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return undefined;
  return value > 1e11 ? value : value * 1_000;
}

function integerOf(value: unknown): number | undefined {
  const n =
    typeof value === 'bigint'
      ? Number(value)
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : value;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
}
