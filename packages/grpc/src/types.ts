import type { Metadata, ServiceDefinition } from '@grpc/grpc-js';
import type { HandlerTransaction, Store } from '@idemq/core';

/**
 * What the interceptor needs of a method definition (grpc-js, proto-loader and generated code
 * all give it): its path and shape, and its serializers, which grpc-js hands no server
 * interceptor: the request's to fingerprint it, the response's to replay stored bytes.
 */
export interface GuardableMethod {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize: (request: never) => Uint8Array;
  responseSerialize: (response: never) => Uint8Array;
  responseDeserialize: (bytes: Buffer) => unknown;
  /** proto-loader's method options: `idempotency_level` decides whether a service's method is guarded. */
  options?: { idempotency_level?: unknown };
}

/** A service definition (what `server.addService` takes) or one of its method definitions. */
export type GuardedMethods = GuardableMethod | ServiceDefinition;

/** What the hooks see of a call: its method path, request metadata and request message. */
export interface GuardedCall {
  /** The method path, `/package.Service/Method`. */
  method: string;
  metadata: Metadata;
  request: unknown;
}

/** What a handler sees of the idempotency record, through `idempotencyContext(call)`. */
export interface GrpcIdempotencyContext {
  idempotencyKey: string;
  /** Strictly increasing per key: pass it to conditional writes downstream. 0 when run unclaimed. */
  fencingToken: number;
  /** 1 on the first run of a key, +1 after each failed one. */
  attempt: number;
  /** Aborted when the lease is lost (never by the client's deadline or cancel). */
  signal: AbortSignal;
  /**
   * With a transactional store (`@idemq/postgres` with `transactions`): the transaction the
   * completion commits in; write the handler's effects through it.
   */
  transaction?: HandlerTransaction;
}

export interface GrpcIdempotencyOptions {
  store: Store;
  /**
   * The methods to guard: service definitions (each unary method, except those whose proto
   * declares `idempotency_level = IDEMPOTENT` or `NO_SIDE_EFFECTS`) or single method definitions
   * (guarded whatever their level). Streaming methods cannot be named; a service's are left alone.
   */
  methods: readonly GuardedMethods[];
  /** Namespace of the records, before the method path and principal. @default 'grpc' */
  scope?: string;
  /** A guarded call without a key gets INVALID_ARGUMENT; `false` lets it run unguarded. @default true */
  required?: boolean;
  /** The request metadata entry holding the key. @default 'idempotency-key' */
  metadataKey?: string;
  /** Takes the key from the call instead of the metadata (e.g. a `request_id` field, AIP-155). */
  key?: (call: GuardedCall) => string | undefined;
  /** Longest key, in characters. @default 255 */
  maxKeyLength?: number;
  /** The tenant part of the scope: one tenant never replays another's response. */
  principal?: (call: GuardedCall) => string | undefined | Promise<string | undefined>;
  /**
   * What makes two calls with one key "the same" (the engine hashes it). @default the request
   * message as the method's serializer encodes it (keys are per method: the scope holds its path)
   */
  fingerprint?: (call: GuardedCall, requestBytes: Uint8Array) => string | Promise<string>;
  /** Response metadata (initial and trailing) a replay repeats. @default none */
  replayMetadata?: readonly string[];
  /**
   * Which status codes are stored and replayed; the others leave the record FAILED for a retry.
   * @default OK and the codes in `STORED_STATUS_CODES`
   */
  storeStatus?: (code: number) => boolean;
  /** How long a claim holds before another process may take it over. @default 40000 */
  leaseMs?: number;
  /** How long a completed key is replayed (its expiry). @default 86400000 (24 h) */
  ttlMs?: number;
  /** Longest retry delay advised with ABORTED, in ms. @default 5000 */
  inProgressRetryMaxDelayMs?: number;
  /** Store down: `'fail'` answers UNAVAILABLE; `'process'` runs the method unguarded. @default 'fail' */
  onStoreError?: 'fail' | 'process';
  /**
   * Largest response message stored for replays, in bytes; a larger one reaches its client and
   * its retries get ALREADY_EXISTS. @default 46080 (fits the store's default 64 KiB limit)
   */
  maxResponseBytes?: number;
}
