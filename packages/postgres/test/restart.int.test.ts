import { createIdempotency, ErrorCodes, isIdemqError } from '@idemq/core';
import { type PostgresServer, startPostgresServer } from '@idemq/services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresStore, transactionOf } from '../src/index.js';

/*
 * A private PostgreSQL SIGKILLed and restarted while transactional runs go on: every store
 * failure is a typed retriable error, nothing is half-written (a ledger row exists exactly when
 * its record is COMPLETED), and the same pool serves again once the server is back.
 */

let server: PostgresServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 12 });
  pool.on('error', () => {});
  await migrate(pool);
  await pool.query('CREATE TABLE ledger (payment_id text NOT NULL)');
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

/** Marks errors the handler itself threw, so store errors can be told apart. */
class HandlerSaw extends Error {}

describe('PostgreSQL killed and restarted mid-run (transactional mode)', () => {
  it('typed retriable errors while it is down, nothing half-written, the pool recovers', async () => {
    const store = postgresStore({ pool, transactions: true, operationTimeoutMs: 1_000 });
    const idempotency = createIdempotency({ store, scope: 'restart', leaseMs: 2_000 });
    const storeErrors: unknown[] = [];
    const ids = Array.from({ length: 120 }, (_, i) => `p-${i}`);
    const pay = async (id: string) => {
      for (;;) {
        try {
          const outcome = await idempotency.run(id, async (ctx) => {
            await transactionOf(ctx)
              .query('INSERT INTO ledger (payment_id) VALUES ($1)', [id])
              .catch((error: Error) => {
                throw new HandlerSaw(error.message);
              });
            await new Promise((resolve) => setTimeout(resolve, 5));
          });
          if (outcome.status === 'processed' || outcome.status === 'duplicate') return;
          await new Promise((resolve) =>
            setTimeout(resolve, outcome.status === 'in-progress' ? outcome.retryAfterMs : 50),
          );
        } catch (error) {
          if (!(error instanceof HandlerSaw)) storeErrors.push(error);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    const queue = [...ids];
    const lanes = Array.from({ length: 6 }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) await pay(id);
    });
    // Kill it while runs are under way, keep it down a moment, then bring it back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await server.restart();
    await Promise.all(lanes);

    expect(storeErrors.length).toBeGreaterThan(0);
    for (const error of storeErrors) {
      expect(isIdemqError(error) && error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
      expect(isIdemqError(error) && error.retriable).toBe(true);
    }
    const { rows } = await pool.query(
      'SELECT count(*)::int AS total, count(DISTINCT payment_id)::int AS distinct FROM ledger',
    );
    expect(rows[0]).toEqual({ total: ids.length, distinct: ids.length });
    for (const id of ids) {
      expect((await store.inspect({ scope: 'restart', requestId: id }))?.state).toBe('COMPLETED');
    }
    await store.close();
  }, 90_000);
});
