import type { CommandCounts } from '../commandCounter.js';

/** The sub-command of `pnpm bench` that runs the consumer benchmark. */
export const TRANSPORTS_COMMAND = 'transports';

/** Transports the consumer benchmark can run on. */
export const TRANSPORTS = ['rabbitmq'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

/** The two consumers compared on one transport, in table order. */
export const CONSUMERS = ['raw', 'idemq'] as const;
export type ConsumerName = (typeof CONSUMERS)[number];

export const CONSUMER_LABEL: Record<ConsumerName, string> = {
  raw: 'raw amqplib consumer',
  idemq: 'idemq createConsumer + redisStore',
};

/** What a consumer session needs to connect; one session per consumer and prefetch. */
export interface ConsumerInit {
  consumer: ConsumerName;
  amqpUrl: string;
  redisUrl: string;
  /** `prefetch(P)` for the raw consumer, `concurrency: P` (= prefetch) for idemq. */
  prefetch: number;
  queueType: 'quorum' | 'classic';
  /** Every Redis key the session writes lives under `<namespace>:`. */
  namespace: string;
}

/** Consume one pre-filled queue until `messages` deliveries were settled. */
export interface ConsumeRequest {
  /** -1 for the unmeasured warm-up. */
  run: number;
  queue: string;
  messages: number;
  /** The round fails when no delivery was settled for this long. */
  stallTimeoutMs: number;
}

export interface ConsumeResult {
  run: number;
  queue: string;
  messages: number;
  /** From the call that starts consuming to the `messages`-th ack. */
  ms: number;
  messagesPerSecond: number;
  /** Deliveries acked (raw: `channel.ack` calls; idemq: `processed` + `duplicate` events). */
  acked: number;
  /** Handler runs, the distinct requestIds among them, and runs for a requestId seen before. */
  handlerRuns: number;
  distinctIds: number;
  duplicateRuns: number;
  /** idemq: consumer events by name (`processed`, `duplicate`, `retry`, `error`…). */
  events: Record<string, number>;
  /** idemq: `store.stats()` over the round. */
  scriptCalls?: number;
  storeRoundTrips?: number;
  /** idemq: commands its ioredis client sent over the round, counted where they leave. */
  redisCommands?: CommandCounts;
  /** idemq: record keys deleted after the round (one per message expected). */
  keysDeleted?: number;
  /** User + system CPU of the consuming process over the measured interval. */
  cpuMicros: number;
}

export interface ConsumerEnd {
  /** Peak resident set of the process that ran the session. */
  maxRssBytes: number;
}
