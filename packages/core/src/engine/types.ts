import type { FingerprintablePayload } from '../ids/fingerprint.js';
import type { Logger } from '../observability/logger.js';
import type { StandardSchemaV1 } from '../options/standardSchema.js';
import type { ResultOmission, Store, StoredError } from '../store/store.js';
import type { IncomingMessage, Transport } from '../transport/transport.js';

/** Options shared by `createIdempotency` and `createConsumer`. */
export interface IdempotencyOptions {
  store: Store;
  /** Idempotency namespace: one record per (scope, requestId). */
  scope: string;
  /**
   * How long a claim holds before another process may take it over.
   * @default 40000
   */
  leaseMs?: number;
  /**
   * How long a COMPLETED record answers duplicates.
   * @default 86400000
   */
  completedTtlMs?: number;
  /**
   * How long a FAILED (or abandoned) record remembers its attempts.
   * @default 86400000
   */
  failedTtlMs?: number;
  /**
   * Renew the lease every `leaseMs / 3` while the handler runs.
   * @default true
   */
  heartbeat?: boolean;
  /**
   * What to do when the store cannot be reached: `'retry'` (fail closed: never run the handler
   * unclaimed) or `'process'` (fail open: run it without idempotency).
   * @default 'retry'
   */
  onStoreError?: 'retry' | 'process';
  /**
   * Store the handler's result and return it to duplicates. A result the store cannot keep (over
   * its `maxResultBytes`, or refused by the serializer) is left out of the record, which is
   * completed all the same: the handler never runs again for it, and duplicates get
   * `resultOmitted` (see `RunOutcome`) and a `result-omitted` event is emitted.
   * @default false
   */
  storeResults?: boolean;
  /** Turns results into strings and back. @default JSON */
  serializer?: ResultSerializer;
  /**
   * Longest accepted requestId, in UTF-8 bytes.
   * @default 512
   */
  maxRequestIdBytes?: number;
  /**
   * Longest wait advised to a caller that found its id IN_PROGRESS elsewhere: the owner's
   * remaining lease, at most this. A consumer redelivers such a copy after that delay; `run()`
   * reports it as the `in-progress` outcome's `retryAfterMs`.
   * @default 5000
   */
  inProgressRetryMaxDelayMs?: number;
  /** Silent by default; pino-compatible. */
  logger?: Logger;
}

export interface ResultSerializer {
  serialize(result: unknown): string;
  deserialize(text: string): unknown;
}

/**
 * Empty here: a package with a transactional store declares its transaction type in it by
 * declaration merging (`@idemq/postgres` adds `transaction: pg.PoolClient`), which types
 * `HandlerContext.transaction`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging
export interface TransactionTypes {}

/** The transaction type a store package declared in `TransactionTypes`, else `unknown`. */
export type HandlerTransaction = TransactionTypes extends { transaction: infer Tx } ? Tx : unknown;

/** What a handler gets besides the message. */
export interface HandlerContext {
  requestId: string;
  /** The record's attempt: 1 on the first claim, +1 after each failure or crash takeover. */
  attempt: number;
  /** Strictly increasing per record: pass it to downstream conditional writes. */
  fencingToken: number;
  /** Aborted when the lease is lost or the consumer stops before the handler finished. */
  signal: AbortSignal;
  /**
   * Lease left, by this process's monotonic clock (0 = may have lapsed). Check it right before
   * an irreversible side effect: unlike `signal`, it is exact even when a blocked event loop
   * kept the heartbeat from running. For full safety pass `fencingToken` downstream.
   */
  leaseRemainingMs(): number;
  /** The error of the previous attempt, when there was one. */
  previousError?: StoredError;
  /**
   * With a transactional store (`TransactionalStore`): the open database transaction this run's
   * completion commits in. Write the handler's effects through it, and they commit together
   * with the COMPLETED mark, or not at all. Absent with any other store.
   */
  transaction?: HandlerTransaction;
}

/**
 * What `run()` resolves. With `storeResults`, `resultOmitted` says the result could not be stored
 * (`too-large`: over the store's `maxResultBytes`; `not-serializable`: a BigInt, a cycle, a
 * function…). fn ran once and its completion is recorded all the same: `processed` still hands
 * the caller fn's result, and every `duplicate` after it carries `resultOmitted` and no `result`.
 */
export type RunOutcome<R> =
  /** `fencingToken` is 0 when the store was down and `onStoreError: 'process'` ran fn unclaimed. */
  | {
      status: 'processed';
      result: R;
      attempt: number;
      fencingToken: number;
      resultOmitted?: ResultOmission;
    }
  /** `completedAt`: when the record was completed, store time (epoch ms). */
  | { status: 'duplicate'; result?: R; resultOmitted?: ResultOmission; completedAt: number }
  /**
   * `retryAfterMs`: the time left on the owner's lease as the store measured it, at most
   * `inProgressRetryMaxDelayMs`; never a constant.
   */
  | { status: 'in-progress'; retryAfterMs: number; attempt: number }
  | { status: 'key-reuse' }
  /**
   * Another owner took the record over, so this run's outcome is not recorded. `result` is
   * present when fn returned (its completion was refused), absent when fn threw.
   */
  | { status: 'lease-lost'; attempt: number; result?: R };

/** What becomes of the claim when the caller's `signal` aborted and fn then threw. */
export type AbortPolicy = 'release' | 'fail';

export interface RunOptions {
  /**
   * The request's payload; its SHA-256 detects the same id reused for another payload. Bytes and
   * strings are hashed as they are; a JSON value (a parsed body, say) in a canonical form, keys
   * sorted, so `{ a: 1, b: 2 }` and `{ b: 2, a: 1 }` are the same payload. A value that form
   * cannot hold (a BigInt, a cycle, a `Date`…) rejects with `PayloadNotFingerprintableError`.
   * See `fingerprint`.
   */
  payload?: FingerprintablePayload;
  /** Aborts `ctx.signal` (the handler decides what to do with it). */
  signal?: AbortSignal;
  /**
   * When `signal` has aborted by the time fn throws (the caller went away: a client that
   * disconnected), `'release'` gives the claim back without counting an attempt, so the retry
   * runs as the same attempt; `'fail'` records the failure like any other. Either way `run()`
   * rejects with fn's error. A fn that returns despite the abort is recorded as processed.
   * @default 'release'
   */
  onAbort?: AbortPolicy;
  /**
   * The idempotency namespace of this call, in place of the one given to `createIdempotency`
   * (a tenant or principal, say): records of two scopes never meet. A non-empty string.
   */
  scope?: string;
  /** Called after each successful lease renewal (a transport extends its own lease here). */
  onLeaseRenewed?: (leaseMs: number) => void | Promise<void>;
}

/** A message as the handler sees it. */
export interface ConsumedMessage<T> {
  requestId: string;
  /** The decoded (and validated, with `schema`) payload. */
  value: T;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  source: string;
  key?: string;
  /** Attempt as the transport counts it (see `attemptSource`). */
  deliveryAttempt: number;
  redelivered: boolean;
  raw: unknown;
}

export type Handler<T, R> = (message: ConsumedMessage<T>, ctx: HandlerContext) => Promise<R> | R;

/** One claimed message of a batch, with its own record's context (attempt, fencing token…). */
export interface BatchItem<T> {
  message: ConsumedMessage<T>;
  ctx: HandlerContext;
}

/** What a batch handler gets besides its items. */
export interface BatchContext {
  /** Aborted when the consumer stops before the batch is done, or when any item's lease is lost. */
  signal: AbortSignal;
  /** The least lease left among the items (see `HandlerContext.leaseRemainingMs`). */
  leaseRemainingMs(): number;
}

/**
 * Each item's outcome, in the order of the items: the shape `Promise.allSettled` resolves with.
 * A `rejected` item fails as if a handler had thrown its `reason` (retried, or dead-lettered
 * when it is a `NonRetriableError`); a `fulfilled` one is completed with its `value`.
 */
export type BatchResults<R> = readonly PromiseSettledResult<R>[];

/**
 * Handles the claimed messages of one fetched batch at once (a bulk insert, say). Resolving
 * `undefined` completes every item; throwing fails every item with that error.
 */
export type BatchHandler<T, R> = (
  items: readonly BatchItem<T>[],
  ctx: BatchContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is `async () => {}`
) => Promise<BatchResults<R> | void> | BatchResults<R> | void;

export interface RetryPolicy {
  /**
   * Handler attempts before the message is dead-lettered.
   * @default 5
   */
  maxAttempts?: number;
  /** @default 1000 */
  baseDelayMs?: number;
  /** @default 60000 */
  maxDelayMs?: number;
  /**
   * `'full'`: a random delay in [0, backoff] (spreads retry storms); `'none'`: exactly backoff.
   * @default 'full'
   */
  jitter?: 'full' | 'none';
}

/** Where a consumer takes each message's requestId from (`ConsumerOptions.requestIdFrom`). */
export type RequestIdSource = 'transport' | 'cloudevents';

/**
 * `createConsumer`'s options: the settings, and either `handler` (one message at a time) or
 * `batchHandler` (the claimed messages of a fetched batch at once).
 */
export type ConsumerOptions<T, R> = ConsumerSettings<T> &
  (
    | { handler: Handler<T, R>; batchHandler?: never }
    | {
        /**
         * Called once per batch of deliveries the transport handed out together (a Kafka fetch,
         * an SQS receive, the messages of one RabbitMQ read), with only the messages claimed for
         * this run: duplicates, messages in progress elsewhere and bad input never reach it.
         * Each item is completed, failed and settled by its own result.
         */
        batchHandler: BatchHandler<T, R>;
        handler?: never;
      }
  );

/** Every consumer option but the handler. */
export interface ConsumerSettings<T> extends IdempotencyOptions {
  transport: Transport;
  /** Queue or topic to consume. */
  source: string;
  /** Consumer group; instances in one group share the work. @default 'default' */
  group?: string;
  /**
   * Most messages processed at once (with `batchHandler`: most messages in its calls at once).
   * @default 10
   */
  concurrency?: number;
  retry?: RetryPolicy;
  /**
   * Payload decoder, replacing the default for every message. Throwing dead-letters the message
   * as malformed. Call `decodeByContentType(body, message.contentType)` for the types you leave
   * to the default.
   * @default `decodeByContentType`: JSON for `application/json`, `+json` or no content type;
   *   a string for `text/*`; the bytes as delivered otherwise
   */
  decode?: (body: Uint8Array, message: IncomingMessage) => T;
  /** Any Standard Schema validator (zod, valibot, arktype…); failures are dead-lettered. */
  schema?: StandardSchemaV1<unknown, T>;
  /**
   * Largest body, in bytes as delivered, the consumer decodes. A larger one (sent by a producer
   * that is not idemq) is dead-lettered with `IDEMQ_ERR_PAYLOAD_TOO_LARGE` before it is decoded
   * or claimed.
   * @default the transport's `capabilities.maxPayloadBytes` (what its `publish` accepts); no
   *   limit when the transport declares none
   */
  maxPayloadBytes?: number;
  /**
   * Where the requestId comes from. `'cloudevents'`: the CloudEvents binary-mode (source, id)
   * pair when the message carries one (see `cloudEventsRequestId`), else as `'transport'`.
   * @default 'transport' (the transport's own requestId, else `deriveRequestId`)
   */
  requestIdFrom?: RequestIdSource;
  /** Derives a requestId when the transport's is absent (default: none, the message is rejected). */
  deriveRequestId?: (message: IncomingMessage) => string | undefined;
  /**
   * Delay before a message is redelivered after a store error (fail-closed).
   * @default 5000
   */
  storeErrorRetryDelayMs?: number;
  /**
   * How long `stop()` waits for running handlers before aborting them.
   * @default 30000
   */
  drainTimeoutMs?: number;
}
