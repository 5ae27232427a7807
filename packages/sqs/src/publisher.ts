import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type OutgoingMessage, type PublishReceipt, uuidv7 } from '@idemq/core';
import { encodeBody, validateRequestId } from '@idemq/core/adapter';
import { encodeWireBody, packAttributes, sqsId, wireSize } from './attributes.js';
import { describeError, isTransient, PayloadTooLargeError, PublishFailedError } from './errors.js';
import type { QueueRef, QueueSettings } from './queues.js';

/** First and longest pause between tries of a send that failed transiently. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 1_000;

/** What the publisher needs from its connection. */
export interface PublisherDeps {
  readonly client: SQSClient;
  readonly maxPayloadBytes: number;
  /** How long transient send failures are tried again. */
  readonly retryMs: number;
  /** False once the transport is closing: no more tries. */
  isOpen(): boolean;
  queueFor(destination: string): Promise<QueueRef>;
  settingsOf(queue: QueueRef): Promise<QueueSettings>;
}

/**
 * Publishes one message with `SendMessage`:
 * - the requestId (a new UUIDv7 unless given) in the `x-idemq-request-id` attribute, headers packed
 *   into one attribute so the 10-attribute limit never drops any;
 * - FIFO: `MessageGroupId` from the key (the requestId when there is none: no order asked for),
 *   `MessageDeduplicationId` from the requestId, so SQS itself drops a re-publish within its
 *   5-minute window;
 * - the size SQS will count is checked first: an oversized message is refused with
 *   `PayloadTooLargeError` before anything is sent;
 * - a transient failure (network, throttling, 5xx) is sent again, with backoff, for up to
 *   `retryMs`: a short outage delays a publish instead of failing it.
 */
export async function publishMessage(
  deps: PublisherDeps,
  destination: string,
  message: OutgoingMessage,
): Promise<PublishReceipt> {
  const requestId =
    message.requestId === undefined ? uuidv7() : validateRequestId(message.requestId);
  const { bytes, contentType } = encodeBody(message);
  const body = encodeWireBody(bytes);
  const attributes = packAttributes(
    {
      requestId,
      headers: { ...message.headers },
      ...(contentType === undefined ? {} : { contentType }),
      ...(message.key === undefined ? {} : { key: message.key }),
    },
    body,
  );
  const size = wireSize(body.text, attributes);
  if (size > deps.maxPayloadBytes) {
    throw new PayloadTooLargeError(destination, size, deps.maxPayloadBytes, requestId);
  }
  const queue = await deps.queueFor(destination);
  const { maxMessageBytes } = await deps.settingsOf(queue);
  if (maxMessageBytes !== undefined && size > maxMessageBytes) {
    throw new PayloadTooLargeError(destination, size, maxMessageBytes, requestId);
  }
  const input = {
    QueueUrl: queue.url,
    MessageBody: body.text,
    MessageAttributes: attributes,
    ...(queue.fifo
      ? {
          MessageGroupId: sqsId(message.key || requestId),
          MessageDeduplicationId: sqsId(requestId),
        }
      : {}),
  };
  const deadline = performance.now() + deps.retryMs;
  for (let attempt = 1; ; attempt++) {
    try {
      // A command per try: the SDK builds a request (and signs it) per send.
      await deps.client.send(new SendMessageCommand(input));
      break;
    } catch (error) {
      const retriable = isTransient(error);
      const pauseMs = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (attempt - 1));
      if (!retriable || !deps.isOpen() || performance.now() + pauseMs > deadline) {
        throw new PublishFailedError(
          `SendMessage to ${queue.name} failed: ${describeError(error)}`,
          { failure: 'refused', destination, requestId, cause: error, retriable },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
  return { requestId };
}
