import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { SQS_DEFAULTS } from './options.js';

const FIFO_SUFFIX = '.fifo';

/** A queue as the transport addresses it. */
export interface QueueRef {
  readonly url: string;
  readonly name: string;
  readonly fifo: boolean;
}

/** What the transport reads once from a queue's attributes. */
export interface QueueSettings {
  /** The queue's default `VisibilityTimeout`, in ms. */
  readonly visibilityMs: number;
  /** `RedrivePolicy.deadLetterTargetArn`, when the queue has one. */
  readonly redriveTargetArn: string | undefined;
  /** `MaximumMessageSize`, when the server reports it (ElasticMQ does not). */
  readonly maxMessageBytes: number | undefined;
}

/** Queue depth as `GetQueueAttributes` reports it (approximate on SQS). */
export interface QueueDepth {
  /** `ApproximateNumberOfMessages`: visible, waiting for a consumer. */
  ready: number;
  /** `ApproximateNumberOfMessagesNotVisible`: received, not deleted yet. */
  inFlight: number;
  /** `ApproximateNumberOfMessagesDelayed`. */
  delayed: number;
}

/** True for a queue URL as opposed to a queue name. */
export function isQueueUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

/** The queue name at the end of a queue URL, or the value itself when it is a name. */
export function queueNameOf(nameOrUrl: string): string {
  if (!isQueueUrl(nameOrUrl)) return nameOrUrl;
  const path = new URL(nameOrUrl).pathname.replace(/\/+$/, '');
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

/** The conventional dead-letter queue of `name`: `<name>-dlq`, or `<base>-dlq.fifo`. */
export function deadLetterNameOf(name: string): string {
  return name.endsWith(FIFO_SUFFIX)
    ? `${name.slice(0, -FIFO_SUFFIX.length)}${SQS_DEFAULTS.deadLetterSuffix}${FIFO_SUFFIX}`
    : `${name}${SQS_DEFAULTS.deadLetterSuffix}`;
}

/** `arn:aws:sqs:<region>:<account>:<name>` → its account and queue name. */
export function parseQueueArn(arn: string): { account: string | undefined; name: string } {
  const parts = arn.split(':');
  const name = parts[parts.length - 1] ?? arn;
  const account = parts.length >= 6 ? parts[4] : undefined;
  return { account: account === '' ? undefined : account, name };
}

/**
 * Resolves sources to queue URLs and reads queue attributes, once per queue and connection.
 * A failed lookup is not cached: the next call tries again.
 */
export class QueueDirectory {
  private readonly refs = new Map<string, Promise<QueueRef>>();
  private readonly settingsByUrl = new Map<string, Promise<QueueSettings>>();

  constructor(
    private readonly client: SQSClient,
    private readonly queueOf: (source: string) => string,
  ) {}

  /** The queue behind a source or destination. */
  ref(source: string): Promise<QueueRef> {
    return this.cached(this.refs, source, () => this.lookup(this.queueOf(source)));
  }

  /** A queue by name or URL, bypassing `queueOf` (dead-letter queues). */
  refByName(nameOrUrl: string, account?: string): Promise<QueueRef> {
    return this.cached(this.refs, `\0${account ?? ''}\0${nameOrUrl}`, () =>
      this.lookup(nameOrUrl, account),
    );
  }

  /** The queue's visibility timeout, redrive target and size limit. */
  settings(queue: QueueRef): Promise<QueueSettings> {
    return this.cached(this.settingsByUrl, queue.url, async () => {
      const { Attributes = {} } = await this.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: queue.url,
          AttributeNames: ['VisibilityTimeout', 'RedrivePolicy', 'MaximumMessageSize'],
        }),
      );
      const redrive = Attributes.RedrivePolicy ? parseRedrive(Attributes.RedrivePolicy) : undefined;
      const maxSize = Number(Attributes.MaximumMessageSize);
      return {
        visibilityMs: Number(Attributes.VisibilityTimeout ?? 30) * 1000,
        redriveTargetArn: redrive,
        maxMessageBytes: Number.isFinite(maxSize) && maxSize > 0 ? maxSize : undefined,
      };
    });
  }

  private async lookup(nameOrUrl: string, account?: string): Promise<QueueRef> {
    const name = queueNameOf(nameOrUrl);
    const fifo = name.endsWith(FIFO_SUFFIX);
    if (isQueueUrl(nameOrUrl)) return { url: nameOrUrl, name, fifo };
    const { QueueUrl } = await this.client.send(
      new GetQueueUrlCommand({
        QueueName: name,
        ...(account === undefined ? {} : { QueueOwnerAWSAccountId: account }),
      }),
    );
    if (!QueueUrl) throw new Error(`SQS returned no URL for queue ${name}`);
    return { url: QueueUrl, name, fifo };
  }

  private cached<V>(map: Map<string, Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
    let found = map.get(key);
    if (!found) {
      found = load();
      map.set(key, found);
      found.catch(() => map.delete(key));
    }
    return found;
  }
}

function parseRedrive(policy: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(policy);
    if (typeof parsed === 'object' && parsed !== null && 'deadLetterTargetArn' in parsed) {
      const arn = parsed.deadLetterTargetArn;
      return typeof arn === 'string' && arn.length > 0 ? arn : undefined;
    }
  } catch {
    // A policy we cannot read is treated as absent; the explicit dead-letter path still works.
  }
  return undefined;
}

/** What {@link declareQueue} creates. */
export interface DeclareQueueOptions {
  /** Create a FIFO queue; `name` must then end in `.fifo`. @default from the name */
  fifo?: boolean;
  /** The queue's `VisibilityTimeout`, a multiple of 1000. @default 30000 (the SQS default) */
  visibilityTimeoutMs?: number;
  /** Also create a dead-letter queue, and with `maxReceiveCount` a `RedrivePolicy` to it. */
  deadLetter?: {
    /** @default `<name>-dlq` (`<base>-dlq.fifo`) */
    name?: string;
    /** SQS moves a message received more often than this to the DLQ (1–1000). */
    maxReceiveCount?: number;
  };
  /** Other queue attributes, passed through to `CreateQueue`. */
  attributes?: Record<string, string>;
}

/** URLs of what {@link declareQueue} created (or found). */
export interface DeclaredQueue {
  url: string;
  deadLetterUrl: string | undefined;
}

/**
 * Creates a queue, and optionally its dead-letter queue and redrive policy, unless they exist
 * with the same attributes (`CreateQueue` is idempotent). For development, tests and demos:
 * production queues belong to your infrastructure code.
 *
 * @example
 * const { url } = await declareQueue(client, 'payments', {
 *   visibilityTimeoutMs: 30_000,
 *   deadLetter: { maxReceiveCount: 5 },
 * });
 */
export async function declareQueue(
  client: SQSClient,
  name: string,
  options: DeclareQueueOptions = {},
): Promise<DeclaredQueue> {
  const fifo = options.fifo ?? name.endsWith(FIFO_SUFFIX);
  const base: Record<string, string> = fifo ? { FifoQueue: 'true' } : {};
  let deadLetterUrl: string | undefined;
  const attributes: Record<string, string> = { ...base, ...options.attributes };
  if (options.visibilityTimeoutMs !== undefined) {
    attributes.VisibilityTimeout = String(Math.ceil(options.visibilityTimeoutMs / 1000));
  }
  if (options.deadLetter) {
    const dlqName = options.deadLetter.name ?? deadLetterNameOf(name);
    const created = await client.send(
      new CreateQueueCommand({ QueueName: dlqName, Attributes: { ...base } }),
    );
    deadLetterUrl = created.QueueUrl;
    const { maxReceiveCount } = options.deadLetter;
    if (maxReceiveCount !== undefined && deadLetterUrl) {
      const { Attributes } = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ['QueueArn'] }),
      );
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: Attributes?.QueueArn,
        maxReceiveCount,
      });
    }
  }
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (!QueueUrl) throw new Error(`SQS returned no URL for queue ${name}`);
  return { url: QueueUrl, deadLetterUrl };
}

/** Reads a queue's approximate depth: ready, in flight, delayed. */
export async function queueDepth(client: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    ready: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** Deletes a queue by URL; a queue that is already gone is not an error. */
export async function deleteQueue(client: SQSClient, queueUrl: string): Promise<void> {
  try {
    await client.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
  } catch (error) {
    if (!(error instanceof Error && /QueueDoesNotExist|NonExistentQueue/.test(error.name))) {
      throw error;
    }
  }
}
