import { ErrorCodes, isIdemqError } from '@idemq/core';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { closeTestPool, freshTable, postgresUrl, testPool } from './helpers.js';

/*
 * Ids, scopes and results are parameters, never SQL text: what a caller sends is stored and
 * found exactly, and nothing in it can reach the database as a statement.
 */

const pool = testPool(4);
afterAll(() => closeTestPool(pool));

const LONG_MS = 60_000;
const hostile = [
  "it's",
  'back\\slash\\\\',
  '"double" quotes',
  "x'); DROP TABLE idemq_records; --",
  "' OR '1'='1",
  '$1 $2 ::text',
  'naïve 😀 日本語 ✓',
  // 512 bytes of UTF-8: 128 four-byte characters.
  '😀'.repeat(128),
];

describe('bad input on PostgreSQL', () => {
  it('stores and finds ids and scopes with quotes, backslashes, unicode and 512 bytes exactly', async () => {
    const table = await freshTable(pool);
    const store = postgresStore({ pool, table });
    for (const scope of hostile) {
      for (const requestId of hostile) {
        const claim = await store.claim({ scope, requestId, leaseMs: LONG_MS, retainMs: LONG_MS });
        expect(claim.status).toBe('claimed');
        if (claim.status !== 'claimed') continue;
        const result = `${scope}|${requestId}`;
        expect(
          await store.complete({ scope, requestId, token: claim.token, ttlMs: LONG_MS, result }),
        ).toBe('ok');
      }
    }
    for (const scope of hostile) {
      for (const requestId of hostile) {
        expect(await store.inspect({ scope, requestId })).toMatchObject({
          scope,
          requestId,
          state: 'COMPLETED',
          result: `${scope}|${requestId}`,
        });
      }
    }
    const { rows } = await pool.query(`SELECT scope, request_id FROM ${table}`);
    expect(rows).toHaveLength(hostile.length ** 2);
    // The injection attempt was data: the default table name it aimed at is untouched if it
    // exists, and ours holds every row exactly as sent.
    expect(new Set(rows.map((row) => `${row.scope}\n${row.request_id}`))).toEqual(
      new Set(hostile.flatMap((scope) => hostile.map((id) => `${scope}\n${id}`))),
    );
    await store.close();
  });

  it('refuses a table name that is not a plain identifier, before any SQL', () => {
    for (const table of ['x; DROP TABLE y', 'a"b', 'a.b.c', '', '1abc']) {
      expect(() => postgresStore({ pool, table })).toThrow(/table must be/);
    }
  });

  it('a NUL in a scope is refused for that record only (typed, not retriable)', async () => {
    const store = postgresStore({ pool, table: await freshTable(pool) });
    const error = await store
      .claim({ scope: 'a\u0000b', requestId: 'x', leaseMs: LONG_MS, retainMs: LONG_MS })
      .catch((thrown: unknown) => thrown);
    expect(isIdemqError(error) && error.code).toBe(ErrorCodes.STORE_REJECTED);
    expect((error as { affects?: string }).affects).toBe('record');
    expect(
      await store.claim({ scope: 'ab', requestId: 'x', leaseMs: LONG_MS, retainMs: LONG_MS }),
    ).toMatchObject({
      status: 'claimed',
    });
    await store.close();
  });

  it('a table that was never migrated is a typed store refusal that says what to do', async () => {
    const store = postgresStore({ pool, table: 'idemq_never_migrated' });
    const error = await store.ready().catch((thrown: unknown) => thrown);
    expect(isIdemqError(error) && error.code).toBe(ErrorCodes.STORE_REJECTED);
    expect((error as { affects?: string }).affects).toBe('store');
    expect((error as Error).message).toMatch(/migrate\(\)/);
    await store.close();
  });

  it('an unknown role (wrong credentials) is a typed store refusal, and closing still works', async () => {
    const url = new URL(postgresUrl);
    url.username = 'idemq_no_such_role';
    const store = postgresStore({ connectionString: url.toString() });
    const error = await store.ready().catch((thrown: unknown) => thrown);
    expect(isIdemqError(error) && error.code).toBe(ErrorCodes.STORE_REJECTED);
    expect((error as { affects?: string }).affects).toBe('store');
    await store.close();
  });

  it('a server that is not there is a retriable unavailable error within the timeout', async () => {
    const store = postgresStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/postgres',
      operationTimeoutMs: 500,
    });
    const started = performance.now();
    const error = await store.ready().catch((thrown: unknown) => thrown);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(isIdemqError(error) && error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(isIdemqError(error) && error.retriable).toBe(true);
    await store.close();
  });
});
