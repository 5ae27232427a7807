import { createRequire } from 'node:module';
import {
  type CallOptions,
  Client,
  type ClientOptions,
  credentials,
  Metadata,
  type ServerUnaryCall,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { memoryStore, type Store } from '@idemq/core';
import { uniqueName } from '../names.js';
import { Resources } from '../resources.js';
import type { CaseEnv } from '../suite.js';
import type {
  GrpcCallContext,
  GrpcHarness,
  GrpcSuiteOptions,
  ResolvedGrpcTiming,
} from './harness.js';
import {
  type ChargeReply,
  type ChargeRequest,
  chargeMethod,
  paymentsService,
} from './paymentsService.js';

/** The metadata entry every replay carries and no first answer does. */
export const REPLAYED = 'idempotent-replayed';
export const KEY = 'idempotency-key';
export const CHARGE = '/idemq.conformance.Payments/Charge';

/** The options a case sets, besides the store, scope and methods the environment provides. */
export type CaseOptions = Omit<GrpcSuiteOptions, 'store' | 'scope' | 'methods'> & { store?: Store };

/** What a call ended with, as a client saw it. */
export interface CallResult {
  code: number;
  details: string;
  /** The initial metadata; `undefined` for a Trailers-Only answer. */
  initial: Metadata | undefined;
  trailers: Metadata;
  /** The reply message's bytes as sent, on OK. */
  bytes: Buffer | undefined;
  reply: ChargeReply | undefined;
}

export type ChargeHandler = (
  call: ServerUnaryCall<ChargeRequest, ChargeReply>,
  callback: sendUnaryData<ChargeReply>,
) => void;

/** One gRPC case's environment: a unique scope and keys, and the servers, clients and stores it opened. */
export class GrpcEnv implements CaseEnv {
  readonly scope = uniqueName('grpc');
  private readonly resources = new Resources();
  private nextKey = 0;

  constructor(
    readonly harness: GrpcHarness,
    readonly timing: ResolvedGrpcTiming,
  ) {}

  /** A new store from the harness (default `memoryStore()`), closed when the case ends. */
  async store(): Promise<Store> {
    const store = this.harness.createStore ? await this.harness.createStore() : memoryStore();
    this.resources.defer('store', () => store.close());
    return store;
  }

  /** Serves Payments with `charge` as Charge (the other methods answer plainly); returns its address. */
  async serve(charge: ChargeHandler, options: CaseOptions = {}): Promise<string> {
    const store = options.store ?? (await this.store());
    const server = await this.harness.start({
      options: { ...options, store, scope: this.scope, methods: [paymentsService()] },
      service: paymentsService(),
      implementation: { ...plainMethods(), Charge: charge } as UntypedServiceImplementation,
    });
    this.resources.defer('server', () => server.close());
    return server.address;
  }

  /** A client of `address`, closed when the case ends. */
  client(address: string, options: ClientOptions = {}): Client {
    const client = new Client(address, credentials.createInsecure(), options);
    this.resources.defer('client', () => client.close());
    return client;
  }

  /** A key no other call of any case uses. */
  key(label = 'key'): string {
    this.nextKey += 1;
    return `${label}-${this.nextKey}-${this.scope}`;
  }

  /** The record a handler's call runs under, from the harness. */
  context(call: ServerUnaryCall<unknown, unknown>): GrpcCallContext | undefined {
    return this.harness.context(call);
  }

  defer(what: string, close: () => unknown): void {
    this.resources.defer(what, close);
  }

  dispose(): Promise<void> {
    return this.resources.dispose();
  }
}

/** A unary call of `path` with the request's bytes as `chargeMethod()` encodes them. */
export function call(
  client: Client,
  key: string | readonly string[] | undefined,
  request: ChargeRequest = { account: 'acct-1', amount: 10 },
  options: CallOptions & { path?: string; requestBytes?: Buffer } = {},
): Promise<CallResult> {
  const metadata = new Metadata();
  for (const value of typeof key === 'string' ? [key] : (key ?? [])) metadata.add(KEY, value);
  const { path = CHARGE, requestBytes, ...callOptions } = options;
  const bytes = requestBytes ?? Buffer.from(chargeMethod().requestSerialize(request));
  return new Promise((resolve) => {
    let initial: Metadata | undefined;
    let reply: Buffer | undefined;
    const unary = client.makeUnaryRequest<Buffer, Buffer>(
      path,
      (raw) => raw,
      (raw) => raw,
      bytes,
      metadata,
      callOptions,
      (_error, value) => {
        reply = value;
      },
    );
    unary.on('metadata', (received: Metadata) => {
      initial = received;
    });
    unary.on('status', (status) => {
      const ok = status.code === 0 && reply !== undefined;
      resolve({
        code: status.code,
        details: status.details,
        initial,
        trailers: status.metadata,
        bytes: ok ? reply : undefined,
        reply: ok && reply ? decodeReply(path, reply) : undefined,
      });
    });
  });
}

function decodeReply(path: string, bytes: Buffer): ChargeReply | undefined {
  return path === CHARGE ? chargeMethod().responseDeserialize(bytes) : undefined;
}

/** A text metadata value, or `undefined`. */
export function text(metadata: Metadata | undefined, name: string): string | undefined {
  const [value] = metadata?.get(name) ?? [];
  return typeof value === 'string' ? value : undefined;
}

/** GetBalance, SetLimit and WatchBalance: methods the interceptor must leave alone. */
function plainMethods(): UntypedServiceImplementation {
  return {
    GetBalance(
      call: ServerUnaryCall<{ account: string }, unknown>,
      callback: sendUnaryData<unknown>,
    ) {
      callback(null, { account: call.request.account, balance: 100 });
    },
    SetLimit(
      call: ServerUnaryCall<{ account: string; limit: number }, unknown>,
      callback: sendUnaryData<unknown>,
    ) {
      callback(null, { account: call.request.account, balance: call.request.limit });
    },
    WatchBalance(call: { request: { account: string }; write(m: unknown): void; end(): void }) {
      call.write({ account: call.request.account, balance: 100 });
      call.end();
    },
  };
}

/** Counts Charge's runs and what each saw of its record. */
export class ChargeCounter {
  runs = 0;
  readonly contexts: (GrpcCallContext | undefined)[] = [];
  private waiters: Array<() => void> = [];

  start(context: GrpcCallContext | undefined): void {
    this.runs += 1;
    this.contexts.push(context);
    for (const wake of this.waiters.splice(0)) wake();
  }

  async started(count = 1): Promise<void> {
    while (this.runs < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

const requireHere = createRequire(import.meta.url);

/** The `google.rpc.RetryInfo` delay in ms carried by `grpc-status-details-bin`, if any. */
export function retryInfoDelayMs(trailers: Metadata): number | undefined {
  const [details] = trailers.get('grpc-status-details-bin');
  if (!(details instanceof Buffer)) return undefined;
  const { Status, RetryInfo } = retryInfoTypes();
  const status = Status.decode(details) as unknown as {
    details: { type_url: string; value: Uint8Array }[];
  };
  const any = status.details.find((d) => d.type_url === 'type.googleapis.com/google.rpc.RetryInfo');
  if (!any) return undefined;
  const info = RetryInfo.toObject(RetryInfo.decode(any.value), {
    longs: Number,
    defaults: true,
  }) as {
    retry_delay: { seconds: number; nanos: number };
  };
  return info.retry_delay.seconds * 1000 + info.retry_delay.nanos / 1e6;
}

interface MessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: object): unknown;
}

let retryTypes: { Status: MessageType; RetryInfo: MessageType } | undefined;

/** google.rpc's Status and RetryInfo, read by protobufjs (proto-loader's own parser). */
function retryInfoTypes(): { Status: MessageType; RetryInfo: MessageType } {
  if (retryTypes) return retryTypes;
  const loaderRequire = createRequire(requireHere.resolve('@grpc/proto-loader'));
  const protobuf = loaderRequire('protobufjs') as {
    Root: new () => {
      loadSync(file: string, options: object): { lookupType(name: string): MessageType };
    };
  };
  const file = new URL('retryInfo.proto', import.meta.url).pathname;
  const root = new protobuf.Root().loadSync(file, { keepCase: true });
  retryTypes = {
    Status: root.lookupType('google.rpc.Status'),
    RetryInfo: root.lookupType('google.rpc.RetryInfo'),
  };
  return retryTypes;
}
