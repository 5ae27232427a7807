import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { createConsumer, memoryTransport, NonRetriableError } from '@idemq/core';
import { idempotencyContext, idempotencyInterceptor } from '@idemq/grpc';
import { idempotency } from '@idemq/http/node';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore, transactionOf } from '../src/index.js';
import { closeTestPool, freshTable, scratchTable, testPool } from './helpers.js';

/*
 * The transactional mode behind the other fronts: an HTTP route on a real node:http server, and
 * a batch handler whose items each commit in their own transaction.
 */

const pool = testPool(20);
afterAll(() => closeTestPool(pool));

const ledgerTable = () => scratchTable(pool, 'ledger', 'payment_id text NOT NULL');

const rows = async (ledger: string) =>
  (await pool.query(`SELECT payment_id FROM ${ledger} ORDER BY payment_id`)).rows.map(
    (row) => row.payment_id as string,
  );

describe('HTTP (Idempotency-Key) with the transactional mode', () => {
  it('the route writes through ctx.transaction: once on success and replay, never when it fails', async () => {
    const store = postgresStore({ pool, table: await freshTable(pool), transactions: true });
    const ledger = await ledgerTable();
    const idempotent = idempotency({ store });
    const server = createServer(
      idempotent(async (req, ctx) => {
        const id = req.url?.slice(1) ?? '';
        await transactionOf(ctx).query(`INSERT INTO ${ledger} VALUES ($1)`, [id]);
        if (id.startsWith('declined')) return { status: 402, body: 'declined after the insert' };
        if (id.startsWith('boom')) throw new Error('crashed after the insert');
        return { status: 201, body: `paid ${id}` };
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const post = (path: string, key: string) =>
      fetch(`http://127.0.0.1:${port}/${path}`, {
        method: 'POST',
        headers: { 'idempotency-key': `"${key}"` },
        body: '{}',
      });

    const first = await post('pay-1', 'k1');
    const replay = await post('pay-1', 'k1');
    expect([first.status, await first.text()]).toEqual([201, 'paid pay-1']);
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    const crashed = await post('boom-1', 'k2');
    expect(crashed.status).toBeGreaterThanOrEqual(500);
    expect(await rows(ledger)).toEqual(['pay-1']);
    server.close();
    await store.close();
  });
});

describe('gRPC (idempotency-key metadata) with the transactional mode', () => {
  it('the method writes through its context’s transaction: once on success and replay, never when it fails', async () => {
    const store = postgresStore({ pool, table: await freshTable(pool), transactions: true });
    const ledger = await ledgerTable();
    const json = {
      serialize: (value: object) => Buffer.from(JSON.stringify(value)),
      deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as { id: string },
    };
    const Pay = {
      path: '/payments.Payments/Pay',
      requestStream: false,
      responseStream: false,
      requestSerialize: json.serialize,
      requestDeserialize: json.deserialize,
      responseSerialize: json.serialize,
      responseDeserialize: json.deserialize,
    };
    const server = new Server({
      interceptors: [idempotencyInterceptor({ store, methods: [{ Pay }] })],
    });
    server.addService(
      { Pay },
      {
        Pay(call: ServerUnaryCall<{ id: string }, object>, callback: sendUnaryData<object>) {
          const ctx = idempotencyContext(call);
          transactionOf({ transaction: ctx?.transaction })
            .query(`INSERT INTO ${ledger} VALUES ($1)`, [call.request.id])
            .then(() =>
              call.request.id.startsWith('boom')
                ? callback(new Error('crashed after the insert'))
                : callback(null, { paid: call.request.id }),
            );
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    const pay = (id: string, key: string) =>
      new Promise<string>((resolve) => {
        const metadata = new Metadata();
        metadata.set('idempotency-key', key);
        client.makeUnaryRequest(
          Pay.path,
          json.serialize,
          JSON.parse as never,
          { id },
          metadata,
          (error, reply) => resolve(error ? `error ${error.code}` : JSON.stringify(reply)),
        );
      });
    expect(await pay('pay-1', 'k1')).toBe('{"paid":"pay-1"}');
    expect(await pay('pay-1', 'k1')).toBe('{"paid":"pay-1"}');
    expect(await pay('boom-1', 'k2')).toMatch(/^error /);
    expect(await rows(ledger)).toEqual(['pay-1']);
    client.close();
    server.forceShutdown();
    await store.close();
  });
});

describe('a batch handler with the transactional mode', () => {
  it('each item commits with its own completion; a rejected item rolls back alone', async () => {
    const store = postgresStore({ pool, table: await freshTable(pool), transactions: true });
    const ledger = await ledgerTable();
    const transport = memoryTransport();
    const seen = new Set<unknown>();
    const consumer = createConsumer<{ id: string }, void>({
      transport,
      store,
      source: 'payments',
      scope: 'batch',
      concurrency: 8,
      batchHandler: async (items) =>
        Promise.allSettled(
          items.map(async ({ message, ctx }) => {
            const transaction = transactionOf(ctx);
            seen.add(transaction);
            await transaction.query(`INSERT INTO ${ledger} VALUES ($1)`, [message.value.id]);
            if (message.value.id === 'p-bad') throw new NonRetriableError('refused after insert');
          }),
        ),
    });
    const settled = new Promise<void>((resolve) => {
      let count = 0;
      const done = () => {
        count += 1;
        if (count === 4) resolve();
      };
      consumer.on('processed', done);
      consumer.on('dead-letter', done);
    });
    await consumer.start();
    for (const id of ['p-1', 'p-2', 'p-bad', 'p-3']) {
      await transport.publish('payments', { requestId: id, body: { id } });
    }
    await settled;
    expect(seen.size).toBe(4);
    expect(await rows(ledger)).toEqual(['p-1', 'p-2', 'p-3']);
    await consumer.stop();
    await transport.close();
    await store.close();
  });
});
