import type { CloudEventIdentity } from '../ids/cloudEvents.js';

/**
 * The transport contract: what every broker adapter (in-memory, Kafka, RabbitMQ, SQS) offers the
 * engine. Adapters translate; the engine decides. An adapter never decides whether to retry,
 * dead-letter or skip a message.
 *
 * Semantics every adapter must honour (checked by `runTransportConformance`, C00–C35):
 * - **Flow.** A subscription hands out at most `maxInFlight` unsettled deliveries at a time, each
 *   to `onDelivery` asynchronously, never from inside the caller's own call (a verb, subscribe).
 * - **Settle once.** Each delivery is settled once: the first of ack / retry / reject / release
 *   wins, and `settled` is true from that call on. Every later verb — `extendLease` too —
 *   resolves `false` without reaching the broker (a double ack closes an AMQP channel), and
 *   never throws.
 * - **What a verb resolves.** `true`: the broker did it. `false`: nothing was done, because
 *   the delivery was settled already or is no longer this connection's (its subscription or
 *   connection closed, its lease lapsed, its receipt gone; the broker then has the message back
 *   and redelivers it). A verb
 *   rejects only when the broker call failed; the message then stays with the broker (requeued,
 *   or redelivered with its channel), never lost, and the delivery stays settled.
 * - **Nothing is lost.** A delivery that is never settled is redelivered when its subscription
 *   or connection dies, or its lease lapses, with `redelivered: true`. `reject` never drops a
 *   message: it lands on the dead-letter destination with the reason.
 * - **Stop and close.** `Subscription.stop()` ends fetching only; `Subscription.close()` also
 *   gives every unsettled delivery back without counting an attempt; `Transport.close()` drops
 *   the connection as a crash would (the broker redelivers, counted where it counts). After a
 *   close the deliveries it gave back resolve `false` on every verb. Each of the three may be
 *   called any number of times, concurrently too; later calls wait for the first and resolve.
 * - **After `close()`** `publish` and `subscribe` reject with `TransportClosedError`
 *   (`IDEMQ_ERR_TRANSPORT_CLOSED`, not retriable); a publish that resolved before is on the
 *   broker.
 * - **Capabilities** say what the adapter does, natively or emulated; the engine and the suite
 *   adapt to them instead of assuming more (see `Capabilities`).
 */
export interface Transport {
  /** Short adapter name, e.g. `memory`, `rabbitmq`. */
  readonly name: string;
  readonly capabilities: Capabilities;
  /**
   * Starts delivering messages of `source` to `onDelivery`; resolves once messages published
   * afterwards reach this subscription (a Kafka adapter waits for its partitions). Rejects with
   * `TransportClosedError` after `close()`.
   */
  subscribe(request: SubscribeRequest): Promise<Subscription>;
  /**
   * Publishes one message; resolves once the broker has it (confirmed: it survives this
   * connection's close). Stamps a UUIDv7 requestId when absent and refuses an invalid one. A
   * body over `capabilities.maxPayloadBytes` is refused before anything is sent
   * (`IDEMQ_ERR_PUBLISH_FAILED`, not retriable). Rejects with `TransportClosedError` after
   * `close()`.
   */
  publish(destination: string, message: OutgoingMessage): Promise<PublishReceipt>;
  /**
   * Closes the connection. Unsettled deliveries go back to the broker for redelivery, exactly as
   * when a process dies (an attempt counted where the broker counts one); settling them
   * afterwards resolves `false`. Its subscriptions end (`health()` down). Idempotent: every
   * call resolves once the first finished. Afterwards `publish` and `subscribe` reject with
   * `TransportClosedError`.
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
  /**
   * Stops fetching: nothing more is handed out. Deliveries already handed out may still be
   * settled, normally. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Stops fetching and gives every unsettled delivery back without counting an attempt (as
   * `release` would); their verbs resolve `false` afterwards. Idempotent.
   */
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
  /** True once any settlement verb (not `extendLease`) has been called, whatever it resolved. */
  readonly settled: boolean;
  /** Done: the message is removed from the broker. */
  ack(): Promise<boolean>;
  /**
   * Failed: deliver again after `delayMs` (0 = as soon as possible), counting an attempt. Not
   * before the delay; a delay above `capabilities.nativeDelay.maxMs` may be refused (the engine
   * never asks for one).
   */
  retry(options?: RetryOptions): Promise<boolean>;
  /** Dead-letter the message with a reason; it is never redelivered from the source. */
  reject(options: RejectOptions): Promise<boolean>;
  /**
   * Give the message back without counting a failure (shutdown, backpressure): redelivered
   * with the same attempt, unless `capabilities.releaseCountsAttempt` says the broker counts it.
   */
  release(): Promise<boolean>;
  /**
   * Keeps the broker from handing the message to anyone else for `ms` from now (not added to
   * what is left; visibility, heartbeat). Does not settle. `true` when the broker agreed, or
   * when it has no lease to extend (`capabilities.leaseExtension` false: the delivery is held
   * until settled or its connection dies); `false` once settled or no longer this
   * connection's, or when the broker refused (past `leaseExtension.maxTotalMs`, receipt gone).
   */
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
  /**
   * The body's media type as the broker carries it (AMQP `content-type` property, Kafka
   * `content-type` header, an SQS message attribute); the default decoder reads the body by it.
   */
  contentType?: string;
  /**
   * The CloudEvents binary-mode `id` and `source` found under the broker's binding names, when
   * the message carries either. Adapters translate names only; the consumer uses them with
   * `requestIdFrom: 'cloudevents'`.
   */
  cloudEvent?: CloudEventIdentity;
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

/**
 * What a transport can do natively; the engine and the conformance suite adapt to it. Constant
 * for a connection's life, and equal for every connection made with the same options.
 */
export interface Capabilities {
  /**
   * How `IncomingMessage.attempt` is known: counted exactly by the broker, approximately (a
   * receive count: it may count more than the attempts made, never fewer), or not at all
   * (`none`: the adapter's own number, `attemptSource: 'emulated'`; the store counts).
   */
  redeliveryCounter: 'exact' | 'approximate' | 'none';
  /** Longest delay `retry` honours natively, or `emulated` when the adapter builds it. */
  nativeDelay: { maxMs: number } | 'emulated';
  /** Whether `reject` uses the broker's own dead-lettering or a copy the adapter publishes. */
  deadLetter: 'native' | 'emulated';
  /**
   * Within what messages of one key arrive in publish order: a partition, a message group, a
   * queue, or no order at all.
   */
  orderingScope: 'partition' | 'group' | 'queue' | 'none';
  /** A message being retried blocks later messages of its key. */
  nackBlocksKey: boolean;
  /** Longest total lease extension, or false when the broker has no lease. */
  leaseExtension: { maxTotalMs: number } | false;
  /**
   * `individual`: an ack removes exactly that message. `contiguous-prefix`: acks take effect
   * up to the first unsettled message (Kafka offsets), so a crash may redeliver later acked
   * ones.
   */
  batchAck: 'individual' | 'contiguous-prefix';
  /** Most headers a message may carry, or null when unbounded. */
  maxHeaders: number | null;
  /** Largest body `publish` accepts, or null when unbounded. */
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
  /** Whether `release` counts as an attempt (false: it is free). */
  releaseCountsAttempt: boolean;
}
