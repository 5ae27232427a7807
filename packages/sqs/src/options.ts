import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import type { Logger } from '@idemq/core';
import { OptionsCheck } from '@idemq/core/adapter';
import { MAX_VISIBILITY_MS } from './errors.js';

/** Options of {@link sqs}. Durations are milliseconds; SQS counts whole seconds, so they are too. */
export interface SqsTransportOptions {
  /**
   * An `SQSClient` you own: the transport uses it and never destroys it. Give `client` or
   * `clientConfig` (neither: a client with the SDK's default region and credential chains).
   */
  client?: SQSClient;
  /**
   * Configuration of a client the transport creates and destroys on `close()`. For ElasticMQ or
   * LocalStack pass `endpoint`, `region` and explicit `credentials`, so the SDK never looks for
   * credentials elsewhere (the EC2 instance-metadata endpoint among them).
   */
  clientConfig?: SQSClientConfig;
  /**
   * Maps a `source` / `destination` to the queue's name or URL, e.g. to keep logical names apart
   * from environment-specific queues. A name is resolved once with `GetQueueUrl`; a URL
   * (`https://…` / `http://…`) is used as is.
   * @default the source itself
   */
  queueOf?: (source: string) => string;
  /**
   * Whether the queues are FIFO queues (`.fifo`). Capabilities follow it: per-group order,
   * a retried message blocks its group. A queue of the other kind is refused.
   * @default false
   */
  fifo?: boolean;
  /**
   * The queues have a `RedrivePolicy`: SQS itself moves a message received more than
   * `maxReceiveCount` times to the dead-letter queue (crash loops included) and
   * `capabilities.deadLetter` is `native`. `reject()` still sends the message there at once, with
   * the reason headers (to the `RedrivePolicy` target). Only a declaration: a queue without a
   * policy still works, with a warning when it first dead-letters.
   * @default false
   */
  redrive?: boolean;
  /**
   * Where `reject()` sends dead letters: a queue name or URL, or a function of the source
   * queue's name.
   * @default the queue's `RedrivePolicy` target when it has one, else `<name>-dlq`
   * (`<name>-dlq.fifo` for a FIFO queue)
   */
  deadLetterQueue?: string | ((queueName: string) => string);
  /**
   * Long-poll time of each `ReceiveMessage` (`WaitTimeSeconds`), a multiple of 1000 up to 20000.
   * `stop()`/`close()` of a subscription wait for an in-flight poll to return, so this also
   * bounds how long closing can take.
   * @default 20000
   */
  waitTimeMs?: number;
  /**
   * Visibility timeout asked for on every receive, a multiple of 1000 up to 12 h.
   * @default the queue's own `VisibilityTimeout`
   */
  visibilityTimeoutMs?: number;
  /**
   * Largest message `publish()` sends (body and message attributes, as SQS counts them); larger
   * ones are refused with `PayloadTooLargeError` before sending. Set it to your queues'
   * `MaximumMessageSize` (SQS allows up to 1 MiB); the queue's own attribute, when the server
   * reports it, lowers it further.
   * @default 262144
   */
  maxPayloadBytes?: number;
  /**
   * How long an `ack()` may wait for others to share its `DeleteMessageBatch` call (10 entries
   * at most per call).
   * @default 5
   */
  ackBatchWindowMs?: number;
  /**
   * How long `publish()` keeps sending again after a transient failure (network, throttling,
   * a server error) before it rejects; the SDK's own retries happen within each try. Safe on
   * FIFO queues (the deduplication id is the requestId); on standard queues a retry after a
   * lost answer may send a duplicate, which the consumer's idempotency absorbs.
   * @default 10000
   */
  publishRetryMs?: number;
  /**
   * How long each SQS request of a client the transport creates may take before it fails as
   * `TimeoutError` (the SDK's own default is to wait for ever: an endpoint that accepts the
   * connection and never answers would hold a publish, an ack or the receive loop for good).
   * Longer than `waitTimeMs`, which a long poll holds its request open for. Not applied to a
   * `client` you pass, nor when `clientConfig.requestHandler` is set: those are yours.
   * @default 30000
   */
  requestTimeoutMs?: number;
  /** Warnings about background calls that failed (give-backs on close, say). @default silent */
  logger?: Logger;
}

/** Defaults of {@link sqs}; every `@default` above is one of these. */
export const SQS_DEFAULTS = Object.freeze({
  fifo: false,
  redrive: false,
  waitTimeMs: 20_000,
  maxPayloadBytes: 262_144,
  ackBatchWindowMs: 5,
  publishRetryMs: 10_000,
  requestTimeoutMs: 30_000,
  deadLetterSuffix: '-dlq',
});

/** SQS accepts messages of at most 1 MiB (quotas-messages). */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** Reports every bad field at once. */
export function validateOptions(options: SqsTransportOptions): void {
  const check = new OptionsCheck('sqs');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  check
    .expect(
      options.client === undefined || options.clientConfig === undefined,
      'give client or clientConfig, not both',
    )
    .expect(
      options.client === undefined || typeof options.client.send === 'function',
      'client must be an SQSClient',
    )
    .expect(
      endpointIsHttp(options.clientConfig?.endpoint),
      'clientConfig.endpoint must be an http:// or https:// URL, e.g. http://127.0.0.1:9324',
    )
    .fn('queueOf', options.queueOf, true)
    .oneOf('fifo', options.fifo, [true, false])
    .oneOf('redrive', options.redrive, [true, false])
    .expect(
      options.deadLetterQueue === undefined ||
        typeof options.deadLetterQueue === 'function' ||
        (typeof options.deadLetterQueue === 'string' && options.deadLetterQueue.length > 0),
      'deadLetterQueue must be a queue name or URL, or a function',
    )
    .integer('waitTimeMs', options.waitTimeMs, 0, 20_000)
    .expect(wholeSeconds(options.waitTimeMs), 'waitTimeMs must be a multiple of 1000')
    .integer('visibilityTimeoutMs', options.visibilityTimeoutMs, 0, MAX_VISIBILITY_MS)
    .expect(
      wholeSeconds(options.visibilityTimeoutMs),
      'visibilityTimeoutMs must be a multiple of 1000',
    )
    .integer('maxPayloadBytes', options.maxPayloadBytes, 1, SQS_MAX_MESSAGE_BYTES)
    .integer('ackBatchWindowMs', options.ackBatchWindowMs, 0, 10_000)
    .integer('publishRetryMs', options.publishRetryMs, 0, 600_000)
    .integer('requestTimeoutMs', options.requestTimeoutMs, 1, 3_600_000)
    .expect(
      typeof options.requestTimeoutMs !== 'number' ||
        options.requestTimeoutMs > (options.waitTimeMs ?? SQS_DEFAULTS.waitTimeMs),
      'requestTimeoutMs must be longer than waitTimeMs (a long poll holds its request that long)',
    )
    .done();
}

/** A string endpoint must be an http(s) URL; the SDK's other endpoint forms are left to it. */
function endpointIsHttp(endpoint: unknown): boolean {
  if (typeof endpoint !== 'string') return true;
  try {
    const { protocol, hostname } = new URL(endpoint);
    return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
  } catch {
    return false;
  }
}

function wholeSeconds(ms: number | undefined): boolean {
  return ms === undefined || typeof ms !== 'number' || ms % 1000 === 0;
}
