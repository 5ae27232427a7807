/**
 * The transport contract: what every broker adapter (in-memory, Kafka, RabbitMQ, SQS) offers the
 * engine. Adapters translate; the engine decides. An adapter never decides whether to retry,
 * dead-letter or skip a message.
 *
 * Semantics every adapter must honour (checked by `runTransportConformance`):
 * - A subscription hands out at most `maxInFlight` unsettled deliveries at a time.
 * - Each delivery is settled once: the first of ack / retry / reject / release wins; later calls
 *   resolve `false` and never reach the broker (a double ack closes an AMQP channel).
 * - A delivery that is never settled is redelivered when its subscription or connection dies,
 *   with `redelivered: true`.
 * - `reject` never drops a message: it lands in the dead-letter destination with the reason.
 */
export interface Transport {
  /** Short adapter name, e.g. `memory`, `rabbitmq`. */
  readonly name: string;
  readonly capabilities: Capabilities;
  /** Starts delivering messages of `source` to `onDelivery`. */
  subscribe(request: SubscribeRequest): Promise<Subscription>;
  /** Publishes one message; resolves once the broker has it. Stamps a requestId when absent. */
  publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt>;
  /**
   * Closes the connection. Unsettled deliveries go back to the broker for redelivery, exactly as
   * when a process dies; settling them afterwards resolves `false`. Idempotent.
   */
  close(): Promise<void>;
}

export interface SubscribeRequest {
  /** Queue or topic name. */
  source: string;
  /**
   * Subscribers in one group compete for messages; each group gets every message.
   * @default 'default'
   */
  group?: string;
  /** Most unsettled deliveries handed out at a time (prefetch). */
  maxInFlight: number;
  /** Called for each delivery. The engine settles it later; the adapter does not wait. */
  onDelivery: (delivery: Delivery) => void;
  /** Called when the subscription fails in a way it cannot recover from by itself. */
  onError?: (error: Error) => void;
}

export interface Subscription {
  /** Stops fetching. Deliveries already handed out may still be settled. Idempotent. */
  stop(): Promise<void>;
  /** Stops fetching and gives every unsettled delivery back without counting an attempt. */
  close(): Promise<void>;
  /** Whether it is consuming now, for readiness and liveness probes. Cheap: no network call. */
  health(): Health;
}

/**
 * How a subscription (or a consumer) stands.
 * - `up`: connected and consuming.
 * - `degraded`: not consuming right now, and getting back to it by itself: starting,
 *   reconnecting after a lost connection, a consumer-group rebalance, receives failing and
 *   being retried. Messages wait on the broker meanwhile; none is lost.
 * - `down`: not consuming, and will not by itself: stopped, closed, or failed for good.
 */
export interface Health {
  status: 'up' | 'degraded' | 'down';
  /** Why it is not up, in a few words (absent when up). */
  reason?: string;
}

export interface Delivery {
  readonly message: IncomingMessage;
  /** True once any settlement verb has been called. */
  readonly settled: boolean;
  /** Done: the message is removed from the broker. */
  ack(): Promise<boolean>;
  /** Failed: deliver again after `delayMs` (0 = as soon as possible), counting an attempt. */
  retry(options?: RetryOptions): Promise<boolean>;
  /** Dead-letter the message with a reason; it is never redelivered from the source. */
  reject(options: RejectOptions): Promise<boolean>;
  /** Give the message back without counting a failure (shutdown, backpressure). */
  release(): Promise<boolean>;
  /** Keeps the broker from redelivering for `ms` more (visibility, heartbeat). */
  extendLease(ms: number): Promise<boolean>;
}

export interface RetryOptions {
  delayMs?: number;
}

export interface RejectOptions {
  /** Human-readable reason, stored in the dead letter's headers (see `deadLetterHeaders`). */
  reason: string;
  /** Stable error code (`IDEMQ_ERR_*`) of the cause. */
  code?: string;
  /** Attempts made, as the engine counted them. */
  attempts?: number;
}

/** Where a delivery's attempt number comes from. */
export type AttemptSource = 'exact' | 'approximate' | 'emulated';

export interface IncomingMessage {
  /**
   * The requestId as found on the wire (string, bytes, or nothing). The engine validates it;
   * adapters never throw for a bad one.
   */
  requestId: unknown;
  /** Payload bytes, exactly as published. */
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  /** Queue or topic it came from. */
  source: string;
  /** Ordering / partition key, when the transport has one. */
  key?: string;
  contentType?: string;
  /** Epoch ms at which it was published, when known. */
  publishedAt?: number;
  /** 1 on the first delivery. */
  attempt: number;
  attemptSource: AttemptSource;
  /** The broker says this may have been delivered before. */
  redelivered: boolean;
  /** The client library's own message object. */
  raw: unknown;
}

export interface OutgoingMessage {
  /** Bytes as is; a string as UTF-8; anything else as JSON (content type application/json). */
  body: unknown;
  /** Defaults to a new UUIDv7. */
  requestId?: string;
  headers?: Record<string, string>;
  key?: string;
  contentType?: string;
}

export interface PublishReceipt {
  requestId: string;
}

/** What a transport can do natively; the engine and the conformance suite adapt to it. */
export interface Capabilities {
  redeliveryCounter: 'exact' | 'approximate' | 'none';
  /** Longest delay `retry` honours natively, or `emulated` when the adapter builds it. */
  nativeDelay: { maxMs: number } | 'emulated';
  deadLetter: 'native' | 'emulated';
  orderingScope: 'partition' | 'group' | 'queue' | 'none';
  /** A message being retried blocks later messages of its key. */
  nackBlocksKey: boolean;
  /** Longest total lease extension, or false when the broker has no lease. */
  leaseExtension: { maxTotalMs: number } | false;
  batchAck: 'individual' | 'contiguous-prefix';
  /** Most headers a message may carry, or null when unbounded. */
  maxHeaders: number | null;
  maxPayloadBytes: number | null;
  /** A group that subscribes late gets messages published before it existed. */
  replayForNewGroup: boolean;
  /**
   * Subscribers naming different groups each get every message (fan-out). False: every
   * subscriber of a source competes for its messages, whatever group it names (SQS; fan-out
   * there takes one queue per group).
   */
  consumerGroups: boolean;
  /**
   * The broker itself drops a message published again with a requestId it saw within
   * `windowMs` (SQS FIFO deduplication ids: 5 minutes), or `false`.
   */
  publishDedup: { windowMs: number } | false;
  /** Whether `release` is free (does not count as an attempt). */
  releaseCountsAttempt: boolean;
}
