import type { RejectOptions } from './transport.js';
import { WireNames } from './wireNames.js';

/** Headers every adapter writes on a dead-lettered message. */
export const DeadLetterHeaders = {
  reason: WireNames.reason,
  code: WireNames.code,
  attempts: WireNames.attempts,
  source: WireNames.source,
} as const;

/**
 * Longest reason a dead letter carries, in UTF-16 code units: a dead letter must never fail for
 * its reason's size (amqplib refuses a header table over 64 KiB; SQS counts attributes in the
 * message size), and a reason longer than this is a stack of detail nobody reads in a header.
 */
export const MAX_DEAD_LETTER_REASON_CHARS = 4_096;

/**
 * The headers that say why a message was dead-lettered, as every adapter writes them: the reason
 * (capped), the code when there is one (never an empty header), the attempts (the engine's count,
 * else the delivery's) and the source it was consumed from.
 */
export function deadLetterHeaders(
  options: RejectOptions,
  delivery: { source: string; attempts: number },
): Record<string, string> {
  const headers: Record<string, string> = {
    [DeadLetterHeaders.reason]: capText(options.reason, MAX_DEAD_LETTER_REASON_CHARS),
  };
  if (options.code) headers[DeadLetterHeaders.code] = options.code;
  headers[DeadLetterHeaders.attempts] = String(options.attempts ?? delivery.attempts);
  headers[DeadLetterHeaders.source] = delivery.source;
  return headers;
}

/**
 * `text` cut to at most `maxChars` UTF-16 code units, the last one an ellipsis when cut. Never
 * splits a surrogate pair: half a character is not text some brokers accept.
 */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
