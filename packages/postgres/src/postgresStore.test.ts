import { InvalidOptionsError, isTransactionalStore } from '@idemq/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from './postgresStore.js';

// Nothing here connects: a pool opens connections on first use.
const url = 'postgres://postgres@127.0.0.1:1/postgres';

describe('postgresStore options', () => {
  it('refuses every bad option in one InvalidOptionsError', () => {
    const pool = new pg.Pool({ connectionString: url });
    const bad = [
      {},
      { pool, connectionString: url },
      { connectionString: url, poolSize: 0 },
      { connectionString: url, operationTimeoutMs: -1 },
      { connectionString: url, transactions: 'yes' },
      { connectionString: url, transactions: { pool: {} } },
      { connectionString: url, sweeper: { intervalMs: 0 } },
      { connectionString: url, sweeper: { batchSize: 1.5 } },
      { connectionString: url, table: 'a; DROP TABLE b' },
    ];
    for (const options of bad) {
      expect(() => postgresStore(options as never), JSON.stringify(Object.keys(options))).toThrow(
        InvalidOptionsError,
      );
    }
    void pool.end();
  });

  it('is a transactional store only in the transactional mode', async () => {
    const plain = postgresStore({ connectionString: url });
    const transactional = postgresStore({ connectionString: url, transactions: true });
    expect(isTransactionalStore(plain)).toBe(false);
    expect(isTransactionalStore(transactional)).toBe(true);
    await Promise.all([plain.close(), transactional.close(), transactional.close()]);
  });
});
