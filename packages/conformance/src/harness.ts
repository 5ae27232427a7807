import type { Capabilities, Store, Transport } from '@idemq/core';

/**
 * What `runStoreConformance` needs to exercise one `Store` implementation.
 *
 * Every case creates its own store through `createStore()` and closes it at the end, and uses a
 * scope no other case uses, so cases may run in parallel against one server.
 */
export interface StoreHarness {
  /** Shown in the `describe` title, e.g. `memory`, `redis (cluster)`. */
  name: string;
  /**
   * A new, connected store, called once or more per case; the suite closes what it gets. For a
   * server-backed store, a new client of the same server (S10 reads through one to check the
   * unreachable store wrote nothing). Only S19 relies on two stores sharing data, and only when
   * `sharedBackend` says they do.
   */
  createStore(): Promise<Store>;
  /**
   * Whether every store `createStore()` returns works on one shared backend, as two processes
   * on one Redis do (a record one claims, the other sees). When true, S19 races two instances
   * on one id and checks their fencing tokens; without it S19 is omitted. @default false
   */
  sharedBackend?: boolean;
  /**
   * A store pointed at a server that cannot be reached (a closed port, say), for S10. Without it
   * S10 is omitted: an in-process store cannot be unreachable.
   */
  createUnreachableStore?(): Promise<Store>;
  /**
   * Store round trips made so far, across every store this harness created. When given, S11
   * asserts that `claimMany` costs exactly one.
   */
  countRoundTrips?(): number;
  /** Largest stored result the stores accept, in UTF-8 bytes. @default 65536 */
  maxResultBytes?: number;
  timing?: StoreTiming;
}

/** Durations the store suite uses; real servers may need more slack than the in-memory store. */
export interface StoreTiming {
  /** Leases and TTLs where expiry itself is tested (S03, S04, S06, S09, S12, S13, S17–S21). @default 150 */
  shortMs?: number;
  /** Extra time after an expiry before checking it happened. @default 60 */
  slackMs?: number;
  /** S10: every operation on an unreachable store must reject within this. @default 5000 */
  unavailableWithinMs?: number;
}

/**
 * What `runTransportConformance` needs to exercise one `Transport` implementation.
 *
 * Requirements on the adapter behind it:
 * - `subscribe()` resolves once the subscription receives messages published afterwards (a
 *   Kafka adapter waits for its partition assignment), so no case sleeps before publishing.
 * - Several `connect()` results behave like several processes on one broker: closing one with
 *   unsettled deliveries makes the broker redeliver them to the others (C07, C30).
 */
export interface TransportHarness {
  /** Shown in the `describe` title, e.g. `memory`, `rabbitmq (quorum)`. */
  name: string;
  /** What the adapter declares; must equal `transport.capabilities` of every connection. */
  capabilities: Capabilities;
  /** A new connection to the same broker on every call. The suite closes what it gets. */
  connect(): Promise<Transport>;
  /** A destination no other case uses, declared and ready (queues, DLQ, topics created). */
  newSource(): Promise<string>;
  /**
   * Where `reject()` of a delivery from `source` lands. The suite reads it with a group of its
   * own that subscribes after the dead letters were written: every group of this destination
   * must see what is already there (e.g. map all its groups to one dead-letter queue).
   */
  deadLetterOf(source: string): string;
  /**
   * The store every consumer-level case (`createConsumer`) runs on; one per case, shared by the
   * case's consumers. @default `memoryStore()` from `@idemq/core`
   */
  createStore?(): Promise<Store>;
  /**
   * The visibility timeout / session lease every connection was configured with, in ms. Required
   * when `capabilities.leaseExtension` is not `false`: C19 and C20 wait around it.
   */
  leaseMs?: number;
  /** Broker-side views the cases use for extra assertions when given. */
  inspect?: BrokerInspector;
  /**
   * Cuts every connection of the transports this harness connected so far, as a broker restart
   * or a network failure would (C24); the transports must reconnect by themselves. Without it
   * C24 is omitted.
   */
  interruptConnections?(): Promise<void> | void;
  /**
   * Which cases this run registers, by id (`C00`…`C35`): for a partial run beside a full one,
   * such as the consumer-level cases again on another `createStore`. A case it leaves out is not
   * registered at all, not even as skipped; a selected case that cannot apply is still omitted
   * with its reason. @default every case
   * @example cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33')
   */
  cases?: (id: string) => boolean;
  /**
   * How consumer-level cases hand messages to their handlers: `single` through `handler`, one
   * message at a time; `batch` through `batchHandler`, each call running the case's handler on
   * every item at once and reporting each item's settled result. @default 'single'
   */
  handlers?: 'single' | 'batch';
  timing?: TransportTiming;
}

/** Broker-side inspection: what a management API or admin client can tell. */
export interface BrokerInspector {
  /**
   * Messages of `destination` for consumer `group` that are ready, delivered and unsettled, or
   * waiting out a delay. Cases assert all three are 0 once every message was acked (C05, C11,
   * C22): nothing lost, nothing left invisible.
   */
  depth(destination: string, group?: string): Promise<QueueDepth>;
}

/** Queue depth as a broker reports it. */
export interface QueueDepth {
  ready: number;
  inFlight: number;
  delayed: number;
}

/** Durations the transport suite uses; scale them up for real brokers. */
export interface TransportTiming {
  /** Longest wait for an expected delivery or event. @default 5000 */
  waitMs?: number;
  /**
   * How long "nothing else arrives" is watched after a sentinel proved the subscription live.
   * Keep it shorter than `leaseMs`. @default 150
   */
  quietMs?: number;
  /** Delay C09 asks `retry` for (capped at `nativeDelay.maxMs`). @default 300 */
  retryDelayMs?: number;
  /** How late a native delay may redeliver beyond its target (C09). @default 1000 */
  delaySlackMs?: number;
  /** How early a delayed redelivery may come (timer and clock granularity). @default 5 */
  delayToleranceMs?: number;
  /** Per-case timeout handed to vitest. @default 20000 */
  caseTimeoutMs?: number;
}

/** Store harness timing with every default filled in. */
export type ResolvedStoreTiming = Required<StoreTiming>;
/** Transport harness timing with every default filled in. */
export type ResolvedTransportTiming = Required<TransportTiming>;

/** Store suite durations unless the harness says otherwise. */
export const STORE_TIMING_DEFAULTS: ResolvedStoreTiming = Object.freeze({
  shortMs: 150,
  slackMs: 60,
  unavailableWithinMs: 5_000,
});

/** Transport suite durations unless the harness says otherwise. */
export const TRANSPORT_TIMING_DEFAULTS: ResolvedTransportTiming = Object.freeze({
  waitMs: 5_000,
  quietMs: 150,
  retryDelayMs: 300,
  delaySlackMs: 1_000,
  delayToleranceMs: 5,
  caseTimeoutMs: 20_000,
});

/** Fills in the store timing defaults. */
export function resolveStoreTiming(timing: StoreTiming = {}): ResolvedStoreTiming {
  return { ...STORE_TIMING_DEFAULTS, ...definedOnly(timing) };
}

/** Fills in the transport timing defaults. */
export function resolveTransportTiming(timing: TransportTiming = {}): ResolvedTransportTiming {
  return { ...TRANSPORT_TIMING_DEFAULTS, ...definedOnly(timing) };
}

/** Drops `undefined` fields, so `{ quietMs: undefined }` keeps the default. */
function definedOnly<O extends object>(value: O): Partial<O> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<O>;
}
