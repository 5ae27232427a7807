import type { CommandCounts } from '../commandCounter.js';

/** The sub-command of `pnpm bench` that runs the consumer benchmarks. */
export const TRANSPORTS_COMMAND = 'transports';

/** Transports the consumer benchmark runs on, in the order `pnpm bench transports` runs them. */
export const TRANSPORTS = ['rabbitmq', 'kafka', 'sqs'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

export function isTransportName(name: string): name is TransportName {
  return (TRANSPORTS as readonly string[]).includes(name);
}

/**
 * The consumers a run can compare on one transport, in table order: the raw client library; the
 * same raw consumer with hand-written `SET NX` idempotency around its handler (`HandRolledGuard`);
 * two floors, the raw consumer with idemq's store alone around its handler (`StoreGuard`: claim
 * and complete, or the claim only); and idemq, with a per-message handler (`idemq`) and with a
 * `batchHandler` (`batch`).
 */
export const CONSUMERS = ['raw', 'hand', 'store', 'claim', 'idemq', 'batch'] as const;
export type ConsumerName = (typeof CONSUMERS)[number];

/** idemq's own consumers: `createConsumer` with a per-message handler or a batch handler. */
export function isIdemqConsumer(consumer: ConsumerName): boolean {
  return consumer === 'idemq' || consumer === 'batch';
}

/** What a run compares unless told otherwise: the floors are for investigating a gap. */
export const DEFAULT_CONSUMERS: readonly ConsumerName[] = ['raw', 'hand', 'idemq', 'batch'];

export function isConsumerName(name: string): name is ConsumerName {
  return (CONSUMERS as readonly string[]).includes(name);
}

const STORE_LABEL = '+ redisStore claim / complete (no engine, no adapter)';
const CLAIM_LABEL = '+ redisStore claim only (no completion)';

/** What each consumer is, per transport (the report's first column). */
export const CONSUMER_LABEL: Record<TransportName, Record<ConsumerName, string>> = {
  rabbitmq: {
    raw: 'raw amqplib consumer',
    hand: 'raw amqplib consumer + hand-written SET NX / SET',
    store: `raw amqplib consumer ${STORE_LABEL}`,
    claim: `raw amqplib consumer ${CLAIM_LABEL}`,
    idemq: 'idemq createConsumer + rabbitmq() + redisStore',
    batch: 'idemq createConsumer (batchHandler) + rabbitmq() + redisStore',
  },
  kafka: {
    raw: 'raw kafkajs eachBatch consumer',
    hand: 'raw kafkajs eachBatch consumer + hand-written SET NX / SET',
    store: `raw kafkajs eachBatch consumer ${STORE_LABEL}`,
    claim: `raw kafkajs eachBatch consumer ${CLAIM_LABEL}`,
    idemq: 'idemq createConsumer + kafka() + redisStore',
    batch: 'idemq createConsumer (batchHandler) + kafka() + redisStore',
  },
  sqs: {
    raw: 'raw client-sqs receive/delete loop',
    hand: 'raw client-sqs loop + hand-written SET NX / SET',
    store: `raw client-sqs loop ${STORE_LABEL}`,
    claim: `raw client-sqs loop ${CLAIM_LABEL}`,
    idemq: 'idemq createConsumer + sqs() + redisStore',
    batch: 'idemq createConsumer (batchHandler) + sqs() + redisStore',
  },
};

/** Where the services are. */
export interface Endpoints {
  redisUrl: string;
  amqpUrl: string;
  kafkaBrokers: string[];
  sqsEndpoint: string;
  sqsRegion: string;
}

/** Transport-specific settings, the same for both consumers. */
export interface TransportSettings {
  /** RabbitMQ: the type of every queue (`rabbitmq()`'s default is quorum). */
  queueType: 'quorum' | 'classic';
  /** Kafka: partitions of every topic; also the raw consumer's `partitionsConsumedConcurrently`. */
  partitions: number;
  /** SQS: long-poll time of every receive, both consumers (whole seconds). */
  sqsWaitTimeMs: number;
}

/** What a consumer session needs to connect; one session per consumer and concurrency. */
export interface ConsumerInit {
  transport: TransportName;
  consumer: ConsumerName;
  endpoints: Endpoints;
  settings: TransportSettings;
  /** Messages in flight at once: RabbitMQ prefetch, idemq `concurrency`, SQS receive capacity. */
  concurrency: number;
  /** Every Redis key the session writes lives under `<namespace>:`. */
  namespace: string;
}

/** Consume one pre-filled source (queue or topic) until `messages` were settled. */
export interface ConsumeRequest {
  /** -1 for the unmeasured warm-up. */
  run: number;
  source: string;
  messages: number;
  /** The round fails when no message was settled for this long. */
  stallTimeoutMs: number;
}

export interface ConsumeResult {
  run: number;
  source: string;
  messages: number;
  /** From the call that starts consuming to the `messages`-th settlement. */
  ms: number;
  /** Of `ms`: until the start call resolved (connect, subscribe, Kafka group join). */
  startMs: number;
  messagesPerSecond: number;
  /** Messages acked (raw: acks / offsets resolved / deletes; idemq: `processed` + `duplicate`). */
  acked: number;
  /** Handler runs, the distinct requestIds among them, and runs for a requestId seen before. */
  handlerRuns: number;
  distinctIds: number;
  duplicateRuns: number;
  /** idemq: consumer events by name (`processed`, `duplicate`, `retry`, `error`…). */
  events: Record<string, number>;
  /** idemq: `store.stats()` over the round. */
  scriptCalls?: number;
  /**
   * idemq and the store floors: `store.stats()` over the round; hand: its commands (each one
   * round trip).
   */
  storeRoundTrips?: number;
  /** Every consumer but raw: its Redis client's commands over the round, counted as they leave. */
  redisCommands?: CommandCounts;
  /**
   * Every consumer but raw: CPU the Redis server used over the measured interval (the whole
   * server: on a shared one, other clients' work counts too).
   */
  redisCpuMicros?: number;
  /** Every consumer but raw: record keys deleted after the round (one per message expected). */
  keysDeleted?: number;
  /** User + system CPU of the consuming process over the measured interval. */
  cpuMicros: number;
  /**
   * CPU of every process on the machine over the measured interval (`machineBusyMicros`):
   * the consumer, the broker, Redis and anything else running.
   */
  machineCpuMicros: number;
}

export interface ConsumerEnd {
  /** Peak resident set of the process that ran the session. */
  maxRssBytes: number;
}
