import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  type Capabilities,
  InvalidOptionsError,
  type OutgoingMessage,
  type PublishReceipt,
  type SubscribeRequest,
  type Subscription,
  silentLogger,
  type Transport,
  TransportClosedError,
} from '@idemq/core';
import { checkSubscribeRequest } from '@idemq/core/adapter';
import { openClient } from './client.js';
import { DeadLetterRouter } from './deadLetters.js';
import { DeleteBatcher } from './deleteBatcher.js';
import {
  describeError,
  isTransient,
  MAX_VISIBILITY_MS,
  TransportUnavailableError,
} from './errors.js';
import { SQS_DEFAULTS, type SqsTransportOptions, validateOptions } from './options.js';
import { publishMessage } from './publisher.js';
import { type QueueDepth, QueueDirectory, type QueueRef, queueDepth } from './queues.js';
import { SqsSubscription } from './receiver.js';

/** Runs a queue lookup; an SQS failure becomes a `TransportUnavailableError` naming the queue. */
async function unavailableOnError<T>(what: string, lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    throw new TransportUnavailableError(`SQS: cannot read the ${what}: ${describeError(error)}`, {
      cause: error,
      retriable: isTransient(error),
    });
  }
}

/** How long SQS remembers a FIFO deduplication id (API_SendMessage). */
const FIFO_DEDUP_WINDOW_MS = 5 * 60 * 1000;

/** The SQS transport: a core `Transport` plus a few SQS views. */
export interface SqsTransport extends Transport {
  /** The client this transport talks through. */
  readonly client: SQSClient;
  /** The URL of the queue a source or destination resolves to. */
  queueUrl(source: string): Promise<string>;
  /** The queue's approximate depth (`GetQueueAttributes`): ready, in flight, delayed. */
  depth(source: string): Promise<QueueDepth>;
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The capabilities an SQS transport declares, for standard or FIFO queues:
 * - attempts come from `ApproximateReceiveCount` (`approximate`): every receive counts,
 *   give-backs and crashes included, so `release()` counts an attempt too;
 * - `retry({ delayMs })` is a visibility change, so the delay limit is the 12 h visibility limit;
 *   the lease is the visibility timeout, extendable to 12 h after the receive;
 * - FIFO keeps order per `MessageGroupId` and a retried message blocks its group; standard
 *   queues promise no order;
 * - headers travel packed in one attribute: no header limit beyond the message size.
 */
export function sqsCapabilities(
  options: Pick<SqsTransportOptions, 'fifo' | 'redrive' | 'maxPayloadBytes'> = {},
): Capabilities {
  const fifo = options.fifo ?? SQS_DEFAULTS.fifo;
  const declared = {
    redeliveryCounter: 'approximate',
    nativeDelay: { maxMs: MAX_VISIBILITY_MS },
    deadLetter: (options.redrive ?? SQS_DEFAULTS.redrive) ? 'native' : 'emulated',
    orderingScope: fifo ? 'group' : 'none',
    nackBlocksKey: fifo,
    leaseExtension: { maxTotalMs: MAX_VISIBILITY_MS },
    batchAck: 'individual',
    maxHeaders: null,
    maxPayloadBytes: options.maxPayloadBytes ?? SQS_DEFAULTS.maxPayloadBytes,
    replayForNewGroup: false,
    releaseCountsAttempt: true,
    // No consumer groups: every subscriber of a queue competes for its messages.
    consumerGroups: false,
    // FIFO deduplication ids are requestIds: SQS drops a re-publish within 5 minutes.
    publishDedup: fifo ? { windowMs: FIFO_DEDUP_WINDOW_MS } : false,
  } as const;
  return Object.freeze(declared);
}

/**
 * An SQS transport for idempotent consumers, on standard queues (at-least-once: duplicates by
 * design, caught by the store) or FIFO queues (order per group, publish deduplicated by
 * requestId). Each call is one connection: its own receive loops and, unless you pass `client`,
 * its own `SQSClient`.
 *
 * Consumer groups do not exist on SQS: every subscriber of a queue competes for its messages,
 * whatever `group` it names. Fan-out takes one queue per group (SNS in front), outside this
 * transport.
 *
 * @example
 * import { createConsumer } from '@idemq/core';
 * import { redisStore } from '@idemq/redis';
 * import { sqs } from '@idemq/sqs';
 *
 * const transport = sqs({
 *   clientConfig: { region: 'eu-west-1' },
 *   visibilityTimeoutMs: 60_000,
 * });
 * const consumer = createConsumer({
 *   transport,
 *   source: 'payments',   // queue name or URL; dead letters go to payments-dlq
 *   scope: 'billing',
 *   store: redisStore({ url: 'redis://127.0.0.1:6379' }),
 *   handler: async (message, ctx) => charge(message.value, { signal: ctx.signal }),
 * });
 * await consumer.start();
 * await transport.publish('payments', { body: { amount: 10 } });
 */
export function sqs(options: SqsTransportOptions = {}): SqsTransport {
  validateOptions(options);
  const { client, owned } = openClient(options);
  const fifo = options.fifo ?? SQS_DEFAULTS.fifo;
  const logger = options.logger ?? silentLogger;
  const maxPayloadBytes = options.maxPayloadBytes ?? SQS_DEFAULTS.maxPayloadBytes;
  const directory = new QueueDirectory(client, options.queueOf ?? ((source) => source));
  const deleter = new DeleteBatcher(
    client,
    options.ackBatchWindowMs ?? SQS_DEFAULTS.ackBatchWindowMs,
  );
  const deadLetters = new DeadLetterRouter(client, directory, options, logger);
  const subscriptions = new Set<SqsSubscription>();
  let closing: Promise<void> | undefined;

  const assertOpen = () => {
    if (closing) throw new TransportClosedError('sqs');
  };

  /** The queue of a source, refused when its kind differs from what the capabilities say. */
  const queueFor = async (source: string): Promise<QueueRef> => {
    const queue = await unavailableOnError(`queue of ${source}`, () => directory.ref(source));
    if (queue.fifo !== fifo) {
      throw new InvalidOptionsError('sqs', [
        `queue ${queue.name} is a ${queue.fifo ? 'FIFO' : 'standard'} queue, but the transport was created with fifo: ${fifo}`,
      ]);
    }
    return queue;
  };

  const transport: SqsTransport = {
    name: 'sqs',
    capabilities: sqsCapabilities(options),
    client,

    async subscribe(request: SubscribeRequest): Promise<Subscription> {
      assertOpen();
      checkSubscribeRequest(request);
      const queue = await queueFor(request.source);
      const settings = await unavailableOnError(`attributes of ${queue.name}`, () =>
        directory.settings(queue),
      );
      assertOpen();
      const visibilityMs = options.visibilityTimeoutMs ?? settings.visibilityMs;
      const subscription = new SqsSubscription(
        {
          client,
          deleter,
          queue,
          visibilityMs,
          receiveVisibilitySeconds:
            options.visibilityTimeoutMs === undefined ? undefined : visibilityMs / 1000,
          waitTimeSeconds: (options.waitTimeMs ?? SQS_DEFAULTS.waitTimeMs) / 1000,
          logger,
          connectionOpen: () => closing === undefined,
          deadLetter: (message, source, reject) => deadLetters.send(queue, source, message, reject),
          onClosed: (closed) => subscriptions.delete(closed),
        },
        request,
      );
      subscriptions.add(subscription);
      subscription.start();
      return subscription;
    },

    async publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt> {
      assertOpen();
      return publishMessage(
        {
          client,
          maxPayloadBytes,
          retryMs: options.publishRetryMs ?? SQS_DEFAULTS.publishRetryMs,
          isOpen: () => closing === undefined,
          queueFor,
          settingsOf: (queue) =>
            unavailableOnError(`attributes of ${queue.name}`, () => directory.settings(queue)),
        },
        destination,
        message,
      );
    },

    async queueUrl(source: string): Promise<string> {
      return (await directory.ref(source)).url;
    },

    async depth(source: string): Promise<QueueDepth> {
      return queueDepth(client, (await directory.ref(source)).url);
    },

    close(): Promise<void> {
      if (!closing) {
        closing = (async () => {
          // A closed connection is a dead process: unsettled messages reappear after their
          // visibility timeout. Acks already asked for are still sent.
          for (const subscription of [...subscriptions]) subscription.crash();
          await deleter.flush();
          if (owned) client.destroy();
        })();
      }
      return closing;
    },

    [Symbol.asyncDispose]() {
      return transport.close();
    },
  };
  return transport;
}
