import { ErrorCodes, IdemqError, silentLogger } from '@idemq/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore } from '../src/index.js';
import { until } from './helpers.js';
import { type RedisProcess, redisProcess } from './redisProcess.js';
import { type SentinelProcess, sentinelProcess } from './sentinelProcess.js';

/*
 * A store over an ioredis Sentinel client, on private servers: a primary, two replicas and one
 * Sentinel (quorum 1), never the shared Redis. The failover test is the reason `durability`
 * exists: Redis replicates asynchronously, and the old primary keeps taking writes for a while
 * after Sentinel promoted a replica; they are gone once it rejoins as a replica. With `WAIT` for
 * every replica after each claim and completion, the store answers only for writes that any
 * promoted replica holds, and a write to the old primary after the promotion fails (the promoted
 * replica no longer acknowledges it). `WAIT` for fewer is not enough: measured here with `WAIT 1`,
 * the other replica, still following the old primary, acknowledged ~1 000 completions in the
 * second before the client moved, and all of them were missing on the new primary.
 */

const NAME = 'idemq-test';
const LEASE = { leaseMs: 10_000, retainMs: 10_000 };

function sentinelClient(sentinel: SentinelProcess): Redis {
  const client = new Redis({
    sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
    name: NAME,
    maxRetriesPerRequest: 1,
    // Reconnect as soon as Sentinel announces a new primary (see the README).
    failoverDetector: true,
  });
  client.on('error', () => {});
  return client;
}

describe('redisStore over Redis Sentinel', () => {
  let primary: RedisProcess;
  let replicas: RedisProcess[];
  let sentinel: SentinelProcess;

  beforeAll(async () => {
    primary = await redisProcess();
    await primary.start();
    replicas = [];
    for (let i = 0; i < 2; i++) {
      const replica = await redisProcess(['--replicaof', '127.0.0.1', String(primary.port)]);
      replicas.push(replica);
      await replica.start();
    }
    sentinel = await sentinelProcess(NAME, primary.port);
    for (const replica of replicas) await sentinel.waitForReplica(replica.port);
  });
  afterAll(async () => {
    await sentinel?.destroy();
    for (const replica of replicas ?? []) await replica.destroy();
    await primary?.destroy();
  });

  it('claims, completes and answers duplicates through a Sentinel client it never closes', async () => {
    const client = sentinelClient(sentinel);
    const store = redisStore({ client });
    await store.ready();
    const claimed = await store.claim({ scope: 'basic', requestId: 'r', ...LEASE });
    if (claimed.status !== 'claimed') throw new Error(`expected a claim, got ${claimed.status}`);
    expect(
      await store.complete({ scope: 'basic', requestId: 'r', token: claimed.token, ttlMs: 60_000 }),
    ).toBe('ok');
    expect((await store.claim({ scope: 'basic', requestId: 'r', ...LEASE })).status).toBe(
      'duplicate',
    );
    await store.close();
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });

  it('warns when a Sentinel client would not follow a failover, and only then', async () => {
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (_: object, message?: string) => warnings.push(String(message)),
    };
    const plain = new Redis({
      sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
      name: NAME,
      lazyConnect: true,
    });
    await redisStore({ client: plain, logger }).close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/failoverDetector/);
    const detecting = sentinelClient(sentinel);
    await redisStore({ client: detecting, logger }).close();
    const standalone = new Redis(primary.url, { lazyConnect: true });
    await redisStore({ client: standalone, logger }).close();
    expect(warnings).toHaveLength(1);
    plain.disconnect();
    detecting.disconnect();
    standalone.disconnect();
  });

  it('keeps every acknowledged record through a handed-over failover (WAIT for every replica)', async () => {
    const load = await startLoad(sentinel, 'handover');
    try {
      const before = await sentinel.primaryPort();
      await sentinel.failover();
      await load.switchedFrom(before);
      // Every replica must follow the new primary before WAIT succeeds again: Sentinel demotes
      // the old primary ~10 s after the promotion (measured: ~12 s until the first record).
      await until('records on the new primary', async () => load.afterSwitch() >= 20, 45_000);
    } finally {
      await load.stop();
    }
    expectOnlyTypedErrors(load.errors);
    expect(await missingOnPrimary(load)).toEqual([]);
  }, 90_000);

  it('keeps every acknowledged record when the primary dies, and waits for its replicas', async () => {
    const load = await startLoad(sentinel, 'crash');
    try {
      const victim = await namedPrimary();
      await victim.kill();
      await load.switchedFrom(victim.port);
      // One replica is gone, so WAIT for every replica cannot succeed: nothing is acknowledged,
      // and nothing the new primary lacks could be.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(load.afterSwitch()).toBe(0);
      // The dead primary comes back (its data on disk), Sentinel makes it a replica of the new one.
      await victim.start();
      await until(
        'records once every replica is back',
        async () => load.afterSwitch() >= 20,
        45_000,
      );
    } finally {
      await load.stop();
    }
    expectOnlyTypedErrors(load.errors);
    expect(await missingOnPrimary(load)).toEqual([]);
  }, 120_000);

  /** The server Sentinel names as the primary now. */
  async function namedPrimary(): Promise<RedisProcess> {
    const port = await sentinel.primaryPort();
    const server = [primary, ...replicas].find((candidate) => candidate.port === port);
    if (!server) throw new Error(`Sentinel named ${port}, not one of ours`);
    return server;
  }

  /** The ids a load's store acknowledged that the primary Sentinel names now does not hold. */
  async function missingOnPrimary(load: Load): Promise<number[]> {
    const onPrimary = redisStore({ url: (await namedPrimary()).url });
    const missing: number[] = [];
    for (const id of load.acknowledged) {
      const record = await onPrimary.inspect({ scope: load.scope, requestId: String(id) });
      if (record?.state !== 'COMPLETED') missing.push(id);
    }
    await onPrimary.close();
    return missing;
  }
});

/** While the primary changed, operations may fail, but only with typed, retriable errors. */
function expectOnlyTypedErrors(errors: readonly unknown[]): void {
  for (const error of errors) {
    expect(error).toBeInstanceOf(IdemqError);
    expect((error as IdemqError).code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect((error as IdemqError).retriable).toBe(true);
  }
}

interface Load {
  scope: string;
  /** Ids whose claim and completion the store acknowledged. */
  acknowledged: number[];
  errors: unknown[];
  /**
   * Waits for Sentinel to name a primary other than `port`; ids started from then on count as
   * after the switch.
   */
  switchedFrom(port: number): Promise<void>;
  /** Acknowledged ids started after the switch. */
  afterSwitch(): number;
  stop(): Promise<void>;
}

/**
 * Four workers claiming and completing new ids in `scope` through a Sentinel client, with
 * `WAIT` for both replicas after every claim and completion; resolves once 20 are acknowledged.
 */
async function startLoad(sentinel: SentinelProcess, scope: string): Promise<Load> {
  const client = sentinelClient(sentinel);
  const store = redisStore({
    client,
    commandTimeoutMs: 2_000,
    durability: { replicas: 2, timeoutMs: 500 },
  });
  await store.ready();
  const acknowledged: number[] = [];
  const errors: unknown[] = [];
  let next = 0;
  let stopped = false;
  let firstAfterSwitch = Number.POSITIVE_INFINITY;

  async function worker() {
    while (!stopped) {
      const id = next++;
      const requestId = String(id);
      try {
        const claimed = await store.claim({ scope, requestId, ...LEASE });
        if (claimed.status !== 'claimed') throw new Error(`${requestId}: ${claimed.status}`);
        const done = await store.complete({
          scope,
          requestId,
          token: claimed.token,
          ttlMs: 60_000,
        });
        if (done === 'ok') acknowledged.push(id);
      } catch (error) {
        errors.push(error);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
  const workers = Array.from({ length: 4 }, worker);
  const load: Load = {
    scope,
    acknowledged,
    errors,
    async switchedFrom(port) {
      await until(
        'Sentinel to name a new primary',
        async () => (await sentinel.primaryPort()) !== port,
        20_000,
      );
      firstAfterSwitch = next;
    },
    afterSwitch: () => acknowledged.filter((id) => id >= firstAfterSwitch).length,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      await store.close();
      client.disconnect();
    },
  };
  try {
    await until('records on the first primary', async () => acknowledged.length >= 20, 10_000);
  } catch (error) {
    await load.stop();
    throw error;
  }
  return load;
}
