import { ErrorCodes, IdemqError } from '@idemq/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisStore, redisStore } from '../src/index.js';
import { until } from './helpers.js';
import { type RedisProcess, redisProcess } from './redisProcess.js';

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };

async function waitForReplicaLink(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    await until(
      'the replica to link to its primary',
      async () => (await client.info('replication')).includes('master_link_status:up'),
      10_000,
    );
  } finally {
    client.disconnect();
  }
}

/** A private primary and a replica linked to it, for the enclosing `describe`. */
function primaryAndReplica(): { primary: RedisProcess; replica: RedisProcess } {
  const servers = {} as { primary: RedisProcess; replica: RedisProcess };
  beforeAll(async () => {
    servers.primary = await redisProcess();
    await servers.primary.start();
    servers.replica = await redisProcess([
      '--replicaof',
      '127.0.0.1',
      String(servers.primary.port),
    ]);
    await servers.replica.start();
    await waitForReplicaLink(servers.replica.url);
  });
  afterAll(async () => {
    await servers.replica?.destroy();
    await servers.primary?.destroy();
  });
  return servers;
}

describe('redisStore durability (WAIT)', () => {
  const servers = primaryAndReplica();

  async function claimAndComplete(store: RedisStore, requestId: string): Promise<void> {
    const claimed = await store.claim({ scope: 'd', requestId, ...LEASE });
    if (claimed.status !== 'claimed') throw new Error(`expected a claim of ${requestId}`);
    const token = claimed.token;
    expect(await store.complete({ scope: 'd', requestId, token, ttlMs: 60_000 })).toBe('ok');
  }

  /** Reads the replica itself: the completions are already there, not merely on the primary. */
  async function expectCompletedOnReplica(ids: readonly string[]): Promise<void> {
    const onReplica = redisStore({ url: servers.replica.url });
    for (const requestId of ids)
      expect(await onReplica.inspect({ scope: 'd', requestId })).toMatchObject({
        state: 'COMPLETED',
      });
    await onReplica.close();
  }

  it('confirms claim and complete on a replica before answering', async () => {
    const store = redisStore({
      url: servers.primary.url,
      durability: { replicas: 1, timeoutMs: 1_000 },
    });
    await claimAndComplete(store, 'r');
    await expectCompletedOnReplica(['r']);
    await store.close();
  });

  it('shares one WAIT among the operations of a tick, each confirmed on the replica', async () => {
    const store = redisStore({
      url: servers.primary.url,
      durability: { replicas: 1, timeoutMs: 1_000 },
    });
    const ids = Array.from({ length: 64 }, (_, i) => `many-${i}`);
    await Promise.all(ids.map((requestId) => claimAndComplete(store, requestId)));
    // A WAIT each would be 128; the claims leave in a few calls, and so do their WAITs.
    expect(store.stats().replicaWaits).toBeLessThanOrEqual(16);
    await expectCompletedOnReplica(ids);
    await store.close();
  });

  it('reports a typed error to every operation that shared a WAIT when too few replicas acknowledge', async () => {
    const store = redisStore({
      url: servers.primary.url,
      durability: { replicas: 2, timeoutMs: 100 },
    });
    const errors = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.claim({ scope: 'd', requestId: `short-${i}`, ...LEASE }).catch((e: unknown) => e),
      ),
    );
    for (const error of errors) {
      expect(error).toBeInstanceOf(IdemqError);
      expect((error as IdemqError).code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    }
    expect(store.stats().replicaWaits).toBe(1);
    await store.close();
  });

  it('reports a typed error when too few replicas acknowledge', async () => {
    const store = redisStore({
      url: servers.primary.url,
      durability: { replicas: 2, timeoutMs: 100 },
    });
    const error = (await store
      .claim({ scope: 'd', requestId: 'short', ...LEASE })
      .catch((e: unknown) => e)) as IdemqError;
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toMatch(/1 of 2 replicas/);
    await store.close();
  });
});

describe('redisStore durability when the primary dies during WAIT', () => {
  const servers = primaryAndReplica();

  it('fails the claim with a typed retriable error, not the ioredis error', async () => {
    // Two replicas asked, one exists: WAIT blocks for its timeout, and the primary dies meanwhile.
    const store = redisStore({
      url: servers.primary.url,
      commandTimeoutMs: 5_000,
      durability: { replicas: 2, timeoutMs: 3_000 },
    });
    const pending = store
      .claim({ scope: 'd', requestId: 'dies', ...LEASE })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await servers.primary.kill();
    const error = await pending;
    expect(error).toBeInstanceOf(IdemqError);
    expect((error as IdemqError).code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect((error as IdemqError).retriable).toBe(true);
    await store.close();
  });
});
