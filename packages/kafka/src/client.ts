/**
 * The few Kafka client calls the transport makes, as one small interface. The transport never
 * touches kafkajs directly: `kafkajsClient` implements this on kafkajs 2.x, and a client with the
 * KafkaJS-compatible API (Confluent's `@confluentinc/kafka-javascript`) can implement it the
 * same way.
 */
export interface KafkaClient {
  /** A consumer group member; one per subscription. */
  consumer(settings: ConsumerSettings): ConsumerClient;
  /** A producer; the transport makes one, lazily, for publishes, retries and dead letters. */
  producer(): ProducerClient;
  /** Cluster metadata and offsets; the transport makes one, lazily. */
  admin(): AdminClient;
}

/** A header value as Kafka clients hand it over: bytes, text, or several of them. */
export type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;

/** One record as fetched. */
export interface FetchedMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, HeaderValue>;
  /** Epoch milliseconds, as a string (producer or broker time, per the topic's setting). */
  timestamp: string;
}

/** The records of one partition from one fetch. */
export interface FetchedBatch {
  topic: string;
  partition: number;
  /** Records that carry a message, in offset order (control records are left out). */
  messages: readonly FetchedMessage[];
  /** Offset of the batch's last record, control records included. */
  lastOffset: string;
  /** Moves the client's fetch position past `offset`; nothing is committed. */
  resolveOffset(offset: string): void;
}

/** A completed group join: who this member is and what it owns now. */
export interface GroupJoin {
  memberId: string;
  /** Partitions per topic. */
  assignment: Readonly<Record<string, readonly number[]>>;
}

export interface ConsumerSettings {
  groupId: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  rebalanceTimeoutMs: number;
  maxWaitTimeMs: number;
  /** Asked after a crash; false leaves the consumer stopped (the transport is closing). */
  restartOnFailure(error: Error): boolean;
}

export interface ConsumerHandlers {
  /** Called for each fetched batch, one at a time. Must return quickly. */
  eachBatch(batch: FetchedBatch): Promise<void>;
  /** Called synchronously after each join, before anything of the new generation is fetched. */
  onGroupJoin(join: GroupJoin): void;
  /**
   * Called synchronously when the member learns of a rebalance, before it rejoins: the last
   * moment to commit under the generation that is ending.
   */
  onRebalancing(): void;
  /** The client crashed; `restarting` says whether it will rejoin by itself. */
  onCrash(error: Error, restarting: boolean): void;
}

/** One topic-partition's commit: the next offset to read. */
export interface OffsetCommit {
  topic: string;
  partition: number;
  offset: string;
}

export interface ConsumerClient {
  /**
   * Connects, subscribes to `topics` and starts fetching; resolves once the first assignment is
   * known (after the first `onGroupJoin`), rejects when the first join fails and
   * `restartOnFailure` declines to try again, or when `stop` is called first.
   */
  start(
    topics: readonly string[],
    fromBeginning: boolean,
    handlers: ConsumerHandlers,
  ): Promise<void>;
  /** Stops fetching `partitions` of `topic` (all of them when omitted). */
  pause(topic: string, partitions?: readonly number[]): void;
  /** Fetches `partitions` of `topic` again (all of them when omitted). */
  resume(topic: string, partitions?: readonly number[]): void;
  /** Sets the next fetch position of a partition; commits nothing. */
  seek(topic: string, partition: number, offset: string): void;
  /**
   * Commits under the current generation, once. Never retried inside the client: a retry after
   * a rebalance would commit for a partition that may belong to another member by then.
   */
  commit(offsets: readonly OffsetCommit[]): Promise<void>;
  /** Tells the coordinator this member is alive (throttled to the heartbeat interval). */
  heartbeat(): Promise<void>;
  /** Leaves the group and disconnects. Idempotent. */
  stop(): Promise<void>;
}

/** A header value to produce; several values keep a repeated header repeated. */
export type ProducedHeaderValue = Exclude<HeaderValue, undefined>;

/** A record to produce. */
export interface ProducedRecord {
  key: string | Buffer | null;
  value: Buffer | null;
  headers: Record<string, ProducedHeaderValue>;
}

export interface ProducerClient {
  /** Produces and waits until every in-sync replica has the records (`acks: -1`). */
  send(topic: string, records: readonly ProducedRecord[]): Promise<void>;
  close(): Promise<void>;
}

export interface AdminClient {
  /** Per partition: the first offset still kept (low) and one past the last one (high). */
  watermarks(topic: string): Promise<Map<number, { low: bigint; high: bigint }>>;
  /** Per partition: the group's committed offset, or -1 when it has none. */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>>;
  /** Partition count, or undefined when the topic does not exist. */
  partitionCount(topic: string): Promise<number | undefined>;
  /** Creates a topic; an existing one is left as it is. */
  createTopic(topic: string, partitions: number): Promise<void>;
  close(): Promise<void>;
}
