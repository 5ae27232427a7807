import type { Metadata, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Store } from '@idemq/core';

/**
 * The options of an idempotency interceptor that the gRPC suite sets, typed structurally so that
 * this package needs no gRPC binding: `@idemq/grpc`'s options accept every value of this type.
 */
export interface GrpcSuiteOptions {
  store: Store;
  /** A namespace no other case uses. */
  scope: string;
  /** The suite's Payments service: Charge is guarded, the others are safe to retry or streaming. */
  methods: readonly ServiceDefinition[];
  leaseMs?: number;
  ttlMs?: number;
  inProgressRetryMaxDelayMs?: number;
  required?: boolean;
  maxKeyLength?: number;
  key?: (call: { method: string; metadata: Metadata; request: unknown }) => string | undefined;
  replayMetadata?: readonly string[];
  onStoreError?: 'fail' | 'process';
}

/** What `GrpcHarness.start` serves. */
export interface GrpcServerSetup {
  options: GrpcSuiteOptions;
  /** The service (`paymentsService()`) and the suite's implementation of it. */
  service: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** A server the harness started. */
export interface GrpcServer {
  /** `127.0.0.1:<port>`. */
  address: string;
  close(): Promise<void>;
}

/**
 * What a server process started by `GrpcHarness.startProcess` serves: `paymentsService()` with
 * `processImplementation(implementation)` from `@idemq/conformance/grpc-process`, behind the
 * interceptor with these options (and `methods: [paymentsService()]`) and a store that outlives
 * the process (Redis, say).
 */
export interface GrpcProcessSetup {
  /** Processes started with the same scope share their records, as instances of one service do. */
  options: { scope: string; leaseMs: number };
  implementation: ProcessImplementationSetup;
}

/** The Charge handler of a server process: counted in a file, so the count survives a SIGKILL. */
export interface ProcessImplementationSetup {
  /** Each run appends `start <pid>` when it begins and `end <pid>` before it answers. */
  countFile: string;
  /** How long a run holds between the two lines. */
  holdMs: number;
}

/** A server running in a child process. */
export interface GrpcProcess {
  address: string;
  /** SIGKILLs the process; resolves once it exited. */
  kill(): Promise<void>;
  /** Stops the process gracefully (or ends it); resolves once it exited. */
  close(): Promise<void>;
}

/** What a handler sees of its record, as the binding exposes it. */
export interface GrpcCallContext {
  fencingToken: number;
  attempt: number;
}

/** What `runGrpcConformance` needs to exercise one gRPC binding of idemq. */
export interface GrpcHarness {
  /** Shown in the `describe` title, e.g. `grpc-js interceptor (redis store)`. */
  name: string;
  /**
   * Serves `setup.implementation` of `setup.service` on 127.0.0.1 behind the binding's
   * interceptor created with `setup.options`. The suite closes what it gets.
   */
  start(setup: GrpcServerSetup): Promise<GrpcServer>;
  /** The record of the call a handler serves; `undefined` when it was not guarded. */
  context(call: { metadata: Metadata }): GrpcCallContext | undefined;
  /** The store a case's interceptor uses; the suite closes it. @default `memoryStore()` */
  createStore?(): Promise<Store>;
  /** A store that cannot reach its server, for G11; without it G11 is omitted. */
  createUnreachableStore?(): Promise<Store>;
  /** Starts a server in a child process (see `GrpcProcessSetup`), for G12; without it G12 is omitted. */
  startProcess?(setup: GrpcProcessSetup): Promise<GrpcProcess>;
  /** Which cases this run registers, by id (`G01`…). @default every case */
  cases?: (id: string) => boolean;
  timing?: GrpcTiming;
}

/** Durations the gRPC suite uses. */
export interface GrpcTiming {
  /** Longest wait for an answer or a file line. @default 10000 */
  waitMs?: number;
  /** Per-case timeout handed to vitest. @default 30000 */
  caseTimeoutMs?: number;
}

export type ResolvedGrpcTiming = Required<GrpcTiming>;

export const GRPC_TIMING_DEFAULTS: ResolvedGrpcTiming = Object.freeze({
  waitMs: 10_000,
  caseTimeoutMs: 30_000,
});
