import {
  Client,
  credentials,
  Metadata,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { paymentsService } from '@idemq/conformance/grpc';
import { InvalidOptionsError, memoryStore, type Store } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GRPC_IDEMPOTENCY_DEFAULTS,
  type GrpcIdempotencyContext,
  type GrpcIdempotencyOptions,
  idempotencyContext,
  idempotencyInterceptor,
} from '../src/index.js';
import { serve } from './grpcServer.js';
import { storeWith } from './storeWith.js';

interface Charge {
  account: string;
  amount: number;
  receipt?: Uint8Array;
}

type ChargeCall = ServerUnaryCall<Charge, Charge & { charge_id: string }>;
type ChargeHandler = (call: ChargeCall, callback: sendUnaryData<unknown>) => void;

const opened: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

/** Serves Payments with `charge` behind the interceptor; returns a client of it. */
async function start(
  charge: ChargeHandler,
  options: Partial<GrpcIdempotencyOptions> = {},
): Promise<{ client: Client; store: Store }> {
  const store = options.store ?? memoryStore();
  const service = paymentsService();
  const server = await serve(service, { Charge: charge }, [
    idempotencyInterceptor({ store, methods: [service], ...options }),
  ]);
  const client = new Client(server.address, credentials.createInsecure());
  opened.push(
    () => store.close(),
    server.close,
    () => client.close(),
  );
  return { client, store };
}

interface Answer {
  code: number;
  details: string;
  initial: Metadata | undefined;
  trailers: Metadata;
  reply: (Charge & { charge_id: string }) | undefined;
}

function charge(
  client: Client,
  key: string | undefined,
  request: Charge = { account: 'a', amount: 1 },
  extra: Record<string, string> = {},
  cancelAfterMs?: number,
): Promise<Answer> {
  const method = paymentsService().Charge;
  if (!method) throw new Error('no Charge');
  const metadata = new Metadata();
  if (key !== undefined) metadata.set('idempotency-key', key);
  for (const [name, value] of Object.entries(extra)) metadata.set(name, value);
  return new Promise((resolve) => {
    let initial: Metadata | undefined;
    let reply: Answer['reply'];
    const pending = client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      metadata,
      (_error, value) => {
        reply = value as Answer['reply'];
      },
    );
    if (cancelAfterMs !== undefined) setTimeout(() => pending.cancel(), cancelAfterMs);
    pending.on('metadata', (received: Metadata) => {
      initial = received;
    });
    pending.on('status', (ended) =>
      resolve({
        code: ended.code,
        details: ended.details,
        initial,
        trailers: ended.metadata,
        reply,
      }),
    );
  });
}

const text = (metadata: Metadata | undefined, name: string) => metadata?.get(name)[0];

describe('idempotencyInterceptor options', () => {
  const service = paymentsService();

  it.each([
    ['no methods', { methods: [] }, /at least one service or method/],
    ['a streaming method named', { methods: [service.WatchBalance] }, /streaming method/],
    ['something else in methods', { methods: [{ path: '/x' }] }, /service definitions or method/],
    ['a binary metadataKey', { metadataKey: 'key-bin' }, /metadataKey/],
    ['a reserved metadataKey', { metadataKey: 'grpc-key' }, /metadataKey/],
    ['a key option that is not a function', { key: 'request_id' }, /key/],
    ['a negative maxResponseBytes', { maxResponseBytes: -1 }, /maxResponseBytes/],
  ])('refuses %s with InvalidOptionsError', (_name, bad, message) => {
    const options = { store: memoryStore(), methods: [service], ...bad } as GrpcIdempotencyOptions;
    expect(() => idempotencyInterceptor(options)).toThrow(InvalidOptionsError);
    expect(() => idempotencyInterceptor(options)).toThrow(message);
  });

  it('defaults to the idempotency-key entry, 255-character keys, 24 h and fail-closed', () => {
    expect(GRPC_IDEMPOTENCY_DEFAULTS).toMatchObject({
      metadataKey: 'idempotency-key',
      maxKeyLength: 255,
      ttlMs: 86_400_000,
      onStoreError: 'fail',
      required: true,
    });
  });
});

describe('idempotencyInterceptor', () => {
  it('replays a reply over maxResponseBytes as ALREADY_EXISTS, marked body-omitted, after its first client got it whole', async () => {
    let runs = 0;
    const receipt = new Uint8Array(2_000).fill(7);
    const { client } = await start(
      (call, callback) => {
        runs += 1;
        callback(null, { charge_id: 'big', amount: call.request.amount, receipt });
      },
      { maxResponseBytes: 1_000 },
    );
    const first = await charge(client, 'k-big');
    expect(first.code).toBe(status.OK);
    expect(first.reply?.receipt).toHaveLength(2_000);
    const replay = await charge(client, 'k-big');
    expect(replay.code).toBe(status.ALREADY_EXISTS);
    expect(text(replay.trailers, 'idempotent-replayed')).toBe('true');
    expect(text(replay.trailers, 'idempotent-body-omitted')).toBe('too-large');
    expect(runs).toBe(1);
  });

  it('keeps tenants apart: one key from two principals runs twice, each replaying its own reply', async () => {
    let runs = 0;
    const { client } = await start(
      (call, callback) => {
        runs += 1;
        callback(null, { charge_id: `for-${text(call.metadata, 'x-tenant')}`, amount: 1 });
      },
      { principal: (call) => text(call.metadata, 'x-tenant') as string | undefined },
    );
    for (const tenant of ['acme', 'globex', 'acme', 'globex']) {
      const answer = await charge(client, 'shared-key', undefined, { 'x-tenant': tenant });
      expect(answer.reply?.charge_id).toBe(`for-${tenant}`);
    }
    expect(runs).toBe(2);
  });

  it('fails a call INTERNAL, without running the handler, when a hook throws', async () => {
    let runs = 0;
    const { client } = await start(
      (_call, callback) => {
        runs += 1;
        callback(null, { charge_id: 'x', amount: 1 });
      },
      {
        principal: () => {
          throw new Error('tenant lookup failed');
        },
      },
    );
    const answer = await charge(client, 'k-hook');
    expect(answer.code).toBe(status.INTERNAL);
    expect(answer.details).toMatch(/tenant lookup failed/);
    expect(runs).toBe(0);
  });

  it('gives the handler its record through idempotencyContext, and nothing to an unguarded call', async () => {
    const seen: (GrpcIdempotencyContext | undefined)[] = [];
    const { client } = await start(
      (call, callback) => {
        seen.push(idempotencyContext(call));
        callback(null, { charge_id: 'x', amount: 1 });
      },
      { required: false },
    );
    await charge(client, 'k-context');
    await charge(client, undefined);
    expect(seen[0]).toMatchObject({ idempotencyKey: 'k-context', attempt: 1 });
    expect(seen[0]?.fencingToken).toBeGreaterThan(0);
    expect(seen[0]?.signal.aborted).toBe(false);
    expect(seen[1]).toBeUndefined();
  });

  it('aborts the handler’s signal when the lease is lost, and its client still gets the reply', async () => {
    const lost = async () => 'lease-lost' as const;
    const losing = storeWith(memoryStore(), { renew: lost, complete: lost });
    let abortedInHandler = false;
    const { client } = await start(
      (call, callback) => {
        const signal = idempotencyContext(call)?.signal;
        signal?.addEventListener('abort', () => {
          abortedInHandler = true;
          callback(null, { charge_id: 'after-loss', amount: 1 });
        });
      },
      { store: losing, leaseMs: 300 },
    );
    const answer = await charge(client, 'k-lost');
    expect(abortedInHandler).toBe(true);
    expect(answer.code).toBe(status.OK);
    expect(answer.reply?.charge_id).toBe('after-loss');
  });

  it('leaves a call cancelled before its handler started FAILED, so that the retry runs it once', async () => {
    const store = memoryStore();
    const slowClaims = storeWith(store, {
      claim: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return store.claim(request);
      },
    });
    let runs = 0;
    const { client } = await start(
      (_call, callback) => {
        runs += 1;
        callback(null, { charge_id: `run-${runs}`, amount: 1 });
      },
      { store: slowClaims },
    );
    const cancelled = await charge(client, 'k-cancel', undefined, {}, 50);
    expect(cancelled.code).toBe(status.CANCELLED);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(runs, 'the handler never ran for the cancelled call').toBe(0);
    const retry = await charge(client, 'k-cancel');
    expect(retry.code, retry.details).toBe(status.OK);
    expect(retry.reply?.charge_id).toBe('run-1');
    expect(runs).toBe(1);
  });

  it('guards a method given as a generic definition with JSON serializers', async () => {
    const definition = {
      path: '/demo.Json/Create',
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: object) => Buffer.from(JSON.stringify(value)),
      requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as object,
      responseSerialize: (value: object) => Buffer.from(JSON.stringify(value)),
      responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as object,
    };
    let runs = 0;
    const store = memoryStore();
    const server = await serve(
      { Create: definition },
      {
        Create: (_call: unknown, callback: sendUnaryData<object>) => {
          runs += 1;
          callback(null, { id: runs });
        },
      },
      [idempotencyInterceptor({ store, methods: [definition] })],
    );
    const client = new Client(server.address, credentials.createInsecure());
    opened.push(
      () => store.close(),
      server.close,
      () => client.close(),
    );
    const call = () =>
      new Promise<unknown>((resolve, reject) => {
        const metadata = new Metadata();
        metadata.set('idempotency-key', 'k-json');
        client.makeUnaryRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          { amount: 1 },
          metadata,
          (error, value) => (error ? reject(error) : resolve(value)),
        );
      });
    expect(await call()).toEqual({ id: 1 });
    expect(await call()).toEqual({ id: 1 });
    expect(runs).toBe(1);
  });
});
