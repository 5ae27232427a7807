import { Client, credentials, Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { paymentsService } from '@idemq/conformance/grpc';
import { memoryStore } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyClientInterceptor, idempotencyInterceptor } from '../src/index.js';
import { serve } from './grpcServer.js';

const opened: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

interface Reply {
  charge_id: string;
}

/** The client interceptor against the server interceptor: retries end in one execution. */
describe('idempotencyClientInterceptor against idempotencyInterceptor', () => {
  it('a retry that meets the running first call waits its RetryInfo, then gets its reply; the handler ran once', async () => {
    const service = paymentsService();
    let runs = 0;
    const server = await serve(
      service,
      {
        Charge: (_call: unknown, callback: (error: null, reply: Reply) => void) => {
          runs += 1;
          setTimeout(() => callback(null, { charge_id: `run-${runs}` }), 400);
        },
      },
      [idempotencyInterceptor({ store: memoryStore(), methods: [service], leaseMs: 1_000 })],
    );
    const client = new Client(server.address, credentials.createInsecure(), {
      interceptors: [idempotencyClientInterceptor()],
    });
    opened.push(server.close, () => client.close());
    const charge = paymentsService().Charge;
    if (!charge) throw new Error('no Charge');
    // One logical call sent twice, as a client whose connection dropped would: the same key.
    const metadata = new Metadata();
    metadata.set('idempotency-key', 'pay-shared');
    const send = () =>
      new Promise<{ code: number; reply: Reply | undefined; tookMs: number }>((resolve) => {
        const startedAt = performance.now();
        client.makeUnaryRequest(
          charge.path,
          charge.requestSerialize,
          charge.responseDeserialize,
          { account: 'a', amount: 5 },
          metadata,
          (error, reply) =>
            resolve({
              code: error?.code ?? status.OK,
              reply: reply as Reply | undefined,
              tookMs: performance.now() - startedAt,
            }),
        );
      });
    const first = send();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const retry = await send();
    expect((await first).reply?.charge_id).toBe('run-1');
    expect(retry.code).toBe(status.OK);
    expect(retry.reply?.charge_id).toBe('run-1');
    // The server advised the lease left (~950 ms): the retry waited it, not 100 ms of backoff.
    expect(retry.tookMs).toBeGreaterThan(800);
    expect(runs).toBe(1);
  });

  it('calls through a server that is down at first retry until it is up, each executed once', async () => {
    const service = paymentsService();
    const store = memoryStore();
    const runs = new Map<string, number>();
    const implementation = {
      Charge: (call: { metadata: Metadata }, callback: (error: null, reply: Reply) => void) => {
        const key = String(call.metadata.get('idempotency-key')[0]);
        runs.set(key, (runs.get(key) ?? 0) + 1);
        callback(null, { charge_id: key });
      },
    };
    // Bind once to learn a free port, close, and start the real server there a little later.
    const probe = await serve(service, implementation, []);
    const address = probe.address;
    await probe.close();
    const client = new Client(address, credentials.createInsecure(), {
      interceptors: [
        idempotencyClientInterceptor({ maxAttempts: 20, baseDelayMs: 50, maxDelayMs: 200 }),
      ],
    });
    opened.push(() => client.close());
    const charge = service.Charge;
    if (!charge) throw new Error('no Charge');
    const calls = Array.from(
      { length: 5 },
      () =>
        new Promise<number>((resolve) =>
          client.makeUnaryRequest(
            charge.path,
            charge.requestSerialize,
            charge.responseDeserialize,
            { account: 'a', amount: 1 },
            new Metadata(),
            (error) => resolve(error?.code ?? status.OK),
          ),
        ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const server = new Server({
      interceptors: [idempotencyInterceptor({ store, methods: [service] })],
    });
    server.addService(service, implementation);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(address, ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    opened.push(() => server.forceShutdown());
    expect(await Promise.all(calls)).toEqual([0, 0, 0, 0, 0]);
    expect(runs.size, 'one key per logical call').toBe(5);
    expect([...runs.values()]).toEqual([1, 1, 1, 1, 1]);
  });
});
