import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { closeTestPool, freshTable, testPool } from './helpers.js';

const pool = testPool(4);
afterAll(() => closeTestPool(pool));

const rowCount = async (table: string) =>
  (await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

describe('sweeping expired records', () => {
  it('sweep() deletes only expired records, at most batchSize per call', async () => {
    const table = await freshTable(pool);
    const store = postgresStore({ pool, table });
    for (let i = 0; i < 5; i += 1) {
      const claim = await store.claim({
        scope: 's',
        requestId: `old-${i}`,
        leaseMs: 10,
        retainMs: 10,
      });
      expect(claim.status).toBe('claimed');
    }
    await store.claim({ scope: 's', requestId: 'live', leaseMs: 60_000, retainMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.sweep(3)).toBe(3);
    expect(await store.sweep(3)).toBe(2);
    expect(await store.sweep(3)).toBe(0);
    expect(await rowCount(table)).toBe(1);
    expect(await store.inspect({ scope: 's', requestId: 'live' })).toMatchObject({
      state: 'IN_PROGRESS',
    });
    await store.close();
  });

  it('the in-process sweeper empties the table of expired records on its interval', async () => {
    const table = await freshTable(pool);
    const store = postgresStore({ pool, table, sweeper: { intervalMs: 50, batchSize: 4 } });
    for (let i = 0; i < 10; i += 1) {
      await store.claim({ scope: 's', requestId: `old-${i}`, leaseMs: 10, retainMs: 10 });
    }
    const deadline = Date.now() + 5_000;
    while ((await rowCount(table)) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await rowCount(table)).toBe(0);
    await store.close();
  });
});
