import { randomUUID } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { createServer } from 'node:net';
import { createIdempotency, ErrorCodes, type IdemqError } from '@idemq/core';
import { recordKey } from '@idemq/core/adapter';
import { type Cluster, Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keySlot, type RedisStore, redisStore } from '../src/index.js';
import { Scripts } from '../src/scripts.js';
import {
  clusterClient,
  scriptCommandCount,
  standaloneClient,
  uniquePrefix,
  urls,
  watchScriptCalls,
} from './helpers.js';

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };

describe('redisStore on standalone Redis', () => {
  let client: Redis;
  let store: RedisStore;
  const scope = 'billing';

  beforeEach(async () => {
    client = standaloneClient();
    store = redisStore({ client, prefix: uniquePrefix() });
    await store.ready();
  });
  afterEach(async () => {
    await store.close();
    await client.quit();
  });

  it('costs one script call per claim, per completion and per duplicate', async () => {
    const before = store.stats().scriptCalls;
    const serverBefore = await scriptCommandCount(client);
    const claimed = await store.claim({ scope, requestId: 'r1', ...LEASE });
    expect(claimed.status).toBe('claimed');
    if (claimed.status !== 'claimed') return;
    expect(
      await store.complete({ scope, requestId: 'r1', token: claimed.token, ttlMs: 60_000 }),
    ).toBe('ok');
    expect(store.stats().scriptCalls - before).toBe(2);
    expect((await store.claim({ scope, requestId: 'r1', ...LEASE })).status).toBe('duplicate');
    expect(store.stats().scriptCalls - before).toBe(3);
    // The server agrees (other tests may run scripts too, so at least, and this file runs serially).
    expect((await scriptCommandCount(client)) - serverBefore).toBeGreaterThanOrEqual(3);
  });

  it("acts on the record a call names, even with another held claim's token", async () => {
    const a = await store.claim({ scope, requestId: 'held-a', ...LEASE });
    const b = await store.claim({ scope, requestId: 'held-b', ...LEASE });
    if (a.status !== 'claimed' || b.status !== 'claimed') throw new Error('not claimed');
    // The store remembers each held claim's key by token; a's token names b's record here.
    const mixed = { scope, requestId: 'held-b', token: a.token };
    expect(await store.renew({ ...mixed, leaseMs: 5_000 })).toBe('lease-lost');
    expect(await store.complete({ ...mixed, ttlMs: 60_000 })).toBe('lease-lost');
    expect(await store.release(mixed)).toBe('lease-lost');
    expect((await store.inspect({ scope, requestId: 'held-a' }))?.state).toBe('IN_PROGRESS');
    expect((await store.inspect({ scope, requestId: 'held-b' }))?.state).toBe('IN_PROGRESS');
    // Each claim still ends with its own token, also after a completion that failed before.
    expect(await store.renew({ scope, requestId: 'held-a', token: a.token, leaseMs: 5_000 })).toBe(
      'ok',
    );
    expect(
      await store.complete({ scope, requestId: 'held-a', token: a.token, ttlMs: 60_000 }),
    ).toBe('ok');
    expect(await store.release({ scope, requestId: 'held-b', token: b.token })).toBe('ok');
    expect(
      await store.complete({ scope, requestId: 'held-a', token: a.token, ttlMs: 60_000 }),
    ).toBe('lease-lost');
  });

  it('claims a batch of 100 ids in one round trip (calls of ≤ 32 ids, all on the wire at once) with per-id outcomes', async () => {
    const first = await store.claim({ scope, requestId: 'b7', ...LEASE });
    expect(first.status).toBe('claimed');
    const before = store.stats();
    const inFlight = watchScriptCalls(client);
    const outcomes = await store.claimMany(
      Array.from({ length: 100 }, (_, i) => ({ scope, requestId: `b${i}`, ...LEASE })),
    );
    expect(store.stats().roundTrips - before.roundTrips).toBe(1);
    expect(store.stats().scriptCalls - before.scriptCalls).toBe(4);
    expect(inFlight.max()).toBe(4);
    inFlight.stop();
    expect(outcomes.map((o) => o.status).filter((s) => s === 'claimed')).toHaveLength(99);
    expect(outcomes[7]?.status).toBe('in-progress');
  });

  it('coalesces concurrent claims into calls of ≤ 32, at most two on the wire at once', async () => {
    const before = store.stats().scriptCalls;
    const inFlight = watchScriptCalls(client);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.claim({ scope, requestId: `c${i}`, ...LEASE })),
    );
    expect(outcomes.every((o) => o.status === 'claimed')).toBe(true);
    // Issued in one tick on an idle store: two calls leave at the end of the tick (the server
    // runs the second while the first's replies are handled), the rest as they come back.
    expect(store.stats().scriptCalls - before).toBe(Math.ceil(200 / 32));
    expect(inFlight.max()).toBe(2);
    inFlight.stop();
  });

  it('sends what one tick issued in one call per script, and what queues meanwhile in the next', async () => {
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => store.claim({ scope, requestId: `t${i}`, ...LEASE })),
    );
    const before = store.stats().scriptCalls;
    const completions = claims.map((claim, i) =>
      claim.status === 'claimed'
        ? store.complete({ scope, requestId: `t${i}`, token: claim.token, ttlMs: 60_000 })
        : Promise.reject(new Error(`t${i} was ${claim.status}`)),
    );
    // A claim issued in the same tick goes in its own (claim) call.
    const other = store.claim({ scope, requestId: 'c-late', ...LEASE });
    expect(await Promise.all(completions)).toEqual(Array(30).fill('ok'));
    expect((await other).status).toBe('claimed');
    expect(store.stats().scriptCalls - before).toBe(2);
    // With two calls of a lane on the wire, what is issued meanwhile waits, then leaves together.
    const first = store.claim({ scope, requestId: 'q0', ...LEASE });
    await new Promise((resolve) => process.nextTick(resolve)); // q0 is on the wire now
    const second = store.claim({ scope, requestId: 'q1', ...LEASE });
    await new Promise((resolve) => process.nextTick(resolve)); // q1 too
    const queued = Array.from({ length: 20 }, (_, i) =>
      store.claim({ scope, requestId: `q${i + 2}`, ...LEASE }),
    );
    await Promise.all([first, second, ...queued]);
    expect(store.stats().scriptCalls - before).toBe(5);
  });

  it('passes each set of settings once per call: different leases, TTLs and results in one tick stay apart', async () => {
    const prefix = uniquePrefix();
    const mixed = redisStore({ client, prefix });
    const leases = [
      { leaseMs: 3_000, retainMs: 1_000 },
      { leaseMs: 6_000, retainMs: 2_000 },
    ] as const;
    const before = mixed.stats().scriptCalls;
    const claims = await Promise.all(
      [0, 1, 2, 3].map((i) => mixed.claim({ scope, requestId: `m${i}`, ...leases[i % 2 ? 1 : 0] })),
    );
    // One call per distinct lease (the coalescing lane is the script and its shared arguments).
    expect(mixed.stats().scriptCalls - before).toBe(2);
    const records = await Promise.all(
      [0, 1, 2, 3].map((i) => mixed.inspect({ scope, requestId: `m${i}` })),
    );
    for (const [i, record] of records.entries()) {
      const { leaseMs, retainMs } = leases[i % 2 ? 1 : 0];
      expect(record?.state).toBe('IN_PROGRESS');
      // A new id's claim answers the server's µs alone; what the client derives from it is
      // exactly what the record holds.
      const claim = claims[i];
      expect(claim?.status === 'claimed' && claim.attempt).toBe(1);
      expect(claim?.status === 'claimed' && claim.fencingToken).toBe(record?.fencingToken);
      expect(claim?.status === 'claimed' && claim.leaseExpiresAt).toBe(record?.leaseExpiresAt);
      const leaseLeft = (record?.leaseExpiresAt ?? 0) - Date.now();
      expect(leaseLeft).toBeGreaterThan(leaseMs - 1_000);
      expect(leaseLeft).toBeLessThanOrEqual(leaseMs + 50);
      const ttl = await client.pttl(recordKey(prefix, scope, `m${i}`));
      expect(ttl).toBeGreaterThan(leaseMs + retainMs - 1_000);
      expect(ttl).toBeLessThanOrEqual(leaseMs + retainMs);
    }
    // Completions with and without a result, two TTLs, in one tick: each keeps its own.
    const beforeCompletions = mixed.stats().scriptCalls;
    const outcomes = await Promise.all(
      claims.map((claim, i) =>
        claim.status === 'claimed'
          ? mixed.complete({
              scope,
              requestId: `m${i}`,
              token: claim.token,
              ttlMs: i < 2 ? 60_000 : 120_000,
              ...(i % 2 === 0 ? { result: `r${i}` } : {}),
            })
          : Promise.reject(new Error(`m${i} was ${claim.status}`)),
      ),
    );
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok']);
    // Four sets of (TTL, result or not): four calls.
    expect(mixed.stats().scriptCalls - beforeCompletions).toBe(4);
    for (const i of [0, 1, 2, 3]) {
      const again = await mixed.claim({ scope, requestId: `m${i}`, ...LEASE });
      expect(again).toMatchObject({ status: 'duplicate' });
      expect(again.status === 'duplicate' ? again.result : 'none').toBe(
        i % 2 === 0 ? `r${i}` : undefined,
      );
      const ttl = await client.pttl(recordKey(prefix, scope, `m${i}`));
      expect(ttl).toBeGreaterThan((i < 2 ? 60_000 : 120_000) - 5_000);
      expect(ttl).toBeLessThanOrEqual(i < 2 ? 60_000 : 120_000);
    }
    await mixed.close();
  });

  it('without coalescing, sends every operation as a call of its own, all at once', async () => {
    const plain = redisStore({ client, prefix: uniquePrefix(), coalesce: false });
    const inFlight = watchScriptCalls(client);
    const before = plain.stats().scriptCalls;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => plain.claim({ scope, requestId: `p${i}`, ...LEASE })),
    );
    expect(plain.stats().scriptCalls - before).toBe(10);
    expect(inFlight.max()).toBe(10);
    inFlight.stop();
    await plain.close();
  });

  it('answers repeated duplicates from the local cache with no round trip, the first from Redis', async () => {
    const cached = redisStore({ client, prefix: uniquePrefix(), localCache: { maxEntries: 10 } });
    const claimed = await cached.claim({ scope, requestId: 'hot', fingerprint: 'f1', ...LEASE });
    if (claimed.status !== 'claimed') throw new Error('expected a claim');
    await cached.complete({
      scope,
      requestId: 'hot',
      token: claimed.token,
      ttlMs: 60_000,
      result: '"r"',
    });
    // The first duplicate is Redis's to answer; its repeats are the cache's.
    const first = await cached.claim({ scope, requestId: 'hot', fingerprint: 'f1', ...LEASE });
    const before = cached.stats().scriptCalls;
    const duplicate = await cached.claim({ scope, requestId: 'hot', fingerprint: 'f1', ...LEASE });
    expect(duplicate).toEqual(first);
    expect(duplicate).toMatchObject({ status: 'duplicate', result: '"r"' });
    expect(cached.stats()).toMatchObject({ scriptCalls: before, cacheHits: 1 });
    // A different payload is not answered from the cache: Redis decides key reuse.
    const reuse = await cached.claim({ scope, requestId: 'hot', fingerprint: 'f2', ...LEASE });
    expect(reuse.status).toBe('key-reuse');
    expect(cached.stats().scriptCalls).toBe(before + 1);
    await cached.close();
  });

  it('the local cache answers a duplicate without its result with the same marker', async () => {
    const cached = redisStore({ client, prefix: uniquePrefix(), localCache: { maxEntries: 10 } });
    const claimed = await cached.claim({ scope, requestId: 'hot-omitted', ...LEASE });
    if (claimed.status !== 'claimed') throw new Error('expected a claim');
    await cached.complete({
      scope,
      requestId: 'hot-omitted',
      token: claimed.token,
      ttlMs: 60_000,
      resultOmitted: 'too-large',
    });
    await cached.claim({ scope, requestId: 'hot-omitted', ...LEASE });
    const before = cached.stats().scriptCalls;
    const duplicate = await cached.claim({ scope, requestId: 'hot-omitted', ...LEASE });
    expect(duplicate).toEqual({
      status: 'duplicate',
      completedAt: expect.any(Number),
      resultOmitted: 'too-large',
    });
    expect(cached.stats()).toMatchObject({ scriptCalls: before, cacheHits: 1 });
    await cached.close();
  });

  it('a handler whose 100 000-byte result is over the limit runs once: two run() calls, one run', async () => {
    const idem = createIdempotency({ store, scope: `omitted-${randomUUID()}`, storeResults: true });
    let calls = 0;
    const handler = () => {
      calls += 1;
      return 'x'.repeat(100_000);
    };
    await expect(idem.run('big', handler)).resolves.toMatchObject({
      status: 'processed',
      resultOmitted: 'too-large',
    });
    await expect(idem.run('big', handler)).resolves.toEqual({
      status: 'duplicate',
      resultOmitted: 'too-large',
      completedAt: expect.any(Number),
    });
    expect(calls).toBe(1);
  });

  it('a Uint8Array result replays as equal bytes, nested too, with the completion time of the server', async () => {
    const idem = createIdempotency({ store, scope: `bytes-${randomUUID()}`, storeResults: true });
    const body = new Uint8Array(40 * 1024).map((_, i) => (i * 131) % 256);
    const before = Date.now();
    await idem.run('bytes', () => ({ status: 200, body }));
    const after = Date.now();
    const replay = await idem.run<unknown>('bytes', () => null);
    expect(replay).toMatchObject({ status: 'duplicate', result: { status: 200, body } });
    const { result, completedAt } = replay as {
      result: { body: unknown };
      completedAt: number;
    };
    expect(result.body).toBeInstanceOf(Uint8Array);
    // Server and test share one machine: the server's TIME falls within the run, give or take.
    expect(completedAt).toBeGreaterThanOrEqual(before - 1_000);
    expect(completedAt).toBeLessThanOrEqual(after + 1_000);
  });

  it('the result limit counts bytes as stored: 48 KiB of bytes are over the 64 KiB limit in base64', async () => {
    const idem = createIdempotency({ store, scope: `bytes-${randomUUID()}`, storeResults: true });
    let calls = 0;
    const handler = () => {
      calls += 1;
      return new Uint8Array(48 * 1024);
    };
    await expect(idem.run('bytes-48k', handler)).resolves.toMatchObject({
      status: 'processed',
      resultOmitted: 'too-large',
    });
    await expect(idem.run('bytes-48k', handler)).resolves.toMatchObject({
      status: 'duplicate',
      resultOmitted: 'too-large',
    });
    expect(calls).toBe(1);
  });

  it('recovers from a script cache flush (NOSCRIPT) transparently', async () => {
    await client.script('FLUSH');
    const outcome = await store.claim({ scope, requestId: 'after-flush', ...LEASE });
    expect(outcome.status).toBe('claimed');
    expect((await store.claim({ scope, requestId: 'after-flush', ...LEASE })).status).toBe(
      'in-progress',
    );
  });

  it('keeps every record under a TTL taken from the server clock', async () => {
    const prefix = uniquePrefix();
    const ttlStore = redisStore({ client, prefix });
    const claimed = await ttlStore.claim({
      scope,
      requestId: 'ttl',
      leaseMs: 1_000,
      retainMs: 2_000,
    });
    if (claimed.status !== 'claimed') throw new Error('expected a claim');
    const key = recordKey(prefix, scope, 'ttl');
    const pttl = await client.pttl(key);
    expect(pttl).toBeGreaterThan(2_500);
    expect(pttl).toBeLessThanOrEqual(3_000);
    await ttlStore.fail({
      scope,
      requestId: 'ttl',
      token: claimed.token,
      ttlMs: 700,
      error: { name: 'E', message: 'm' },
    });
    expect(await client.pttl(key)).toBeLessThanOrEqual(700);
    await ttlStore.close();
  });

  it("reads a record's expiry the same way before Redis 7.0 (now + PTTL) as with PEXPIRETIME", async () => {
    const prefix = uniquePrefix();
    const timedStore = redisStore({ client, prefix });
    await timedStore.claim({ scope, requestId: 'expiry', leaseMs: 1_000, retainMs: 60_000 });
    const key = recordKey(prefix, scope, 'expiry');
    // A server without PEXPIRETIME rejects the call, which is all the script's fallback tests
    // for: an unknown command name takes the same branch on this 7.x server.
    const pre70 = Scripts.inspect.replace("'PEXPIRETIME'", "'NO-SUCH-COMMAND'");
    expect(pre70).not.toBe(Scripts.inspect);
    const [exact] = (await client.eval(Scripts.inspect, 1, key)) as string[];
    const [fallback, ...fields] = (await client.eval(pre70, 1, key)) as string[];
    expect(Number(exact)).toBe(await client.pexpiretime(key));
    expect(Math.abs(Number(fallback) - Number(exact))).toBeLessThanOrEqual(1);
    expect(fields).toContain('I');

    await client.persist(key);
    expect(((await client.eval(pre70, 1, key)) as string[])[0]).toBe('-1');
    expect(((await client.eval(pre70, 1, `${key}-absent`)) as string[])[0]).toBe('-1');
    await client.del(key);
    await timedStore.close();
  });

  it('never closes a client it did not create', async () => {
    await store.close();
    expect(await client.ping()).toBe('PONG');
  });

  it('rejects bad options with every problem listed', () => {
    expect(() => redisStore({ url: '', prefix: 'a{b}', commandTimeoutMs: 0 })).toThrowError(
      expect.objectContaining({
        code: ErrorCodes.OPTIONS_INVALID,
        problems: expect.arrayContaining([
          expect.stringContaining('url'),
          expect.stringContaining('prefix'),
          expect.stringContaining('commandTimeoutMs'),
        ]),
      }),
    );
  });
});

describe('redisStore record keys', () => {
  const adversarial = [
    'plain',
    'with space',
    'a:b:c',
    '{}',
    '{x}',
    '}{',
    '{}{x}',
    'line\nbreak',
    'tab\there',
    'é',
    'e\u0301',
    '😀',
    '*?[]',
    ']]',
    "'",
    '%s',
    'x'.repeat(512),
  ];

  it('never collide across ids and scopes with separators, braces, newlines and unicode', async () => {
    const client = standaloneClient();
    const store = redisStore({ client, prefix: uniquePrefix() });
    const scopes = ['s', 's:x', 'with space', '{s}'];
    const claims = await store.claimMany(
      scopes.flatMap((scope) => adversarial.map((requestId) => ({ scope, requestId, ...LEASE }))),
    );
    expect(claims.every((c) => c.status === 'claimed')).toBe(true);
    for (const scope of scopes) {
      for (const requestId of adversarial) {
        const record = await store.inspect({ scope, requestId });
        expect(record).toMatchObject({ scope, requestId, state: 'IN_PROGRESS', attempt: 1 });
      }
    }
    await store.close();
    await client.quit();
  });

  it("match the server's CLUSTER KEYSLOT for adversarial ids", async () => {
    const cluster: Cluster = clusterClient();
    const ids = [...adversarial, ...Array.from({ length: 300 }, () => `{${randomUUID()}}{x}`)];
    for (const id of ids) {
      const key = recordKey('idemq', 'scope{}', id);
      const serverSlot = await cluster.cluster('KEYSLOT', key);
      expect(keySlot(key)).toBe(Number(serverSlot));
    }
    await cluster.quit();
  });
});

describe('redisStore on a dead server', () => {
  it('answers with a typed retriable error within commandTimeoutMs', async () => {
    const store = redisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 300 });
    const startedAt = performance.now();
    const error = (await store
      .claim({ scope: 's', requestId: 'x', ...LEASE })
      .catch((e: unknown) => e)) as IdemqError;
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.retriable).toBe(true);
    expect(performance.now() - startedAt).toBeLessThan(1_500);
    await store.close();
  });

  it('fails every call a silent server never answers within commandTimeoutMs, with one timer', async () => {
    // Accepts connections and never replies: each call must be failed by the store's own bound.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
    const store = redisStore({ client, commandTimeoutMs: 250 });
    try {
      const startedAt = performance.now();
      const settled = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.claim({ scope: 's', requestId: `silent${i}`, ...LEASE }).then(
            () => ({ error: undefined, at: performance.now() - startedAt }),
            (error: IdemqError) => ({ error, at: performance.now() - startedAt }),
          ),
        ),
      );
      for (const { error, at } of settled) {
        expect(error?.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
        expect(error?.retriable).toBe(true);
        expect(error?.message).toMatch(/timed out after 2[45]\d ms/);
        expect(at).toBeGreaterThanOrEqual(245);
        expect(at).toBeLessThan(1_000);
      }
    } finally {
      await store.close();
      client.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('never puts a password from the URL into an error', async () => {
    const store = redisStore({
      url: 'redis://user:s3cret-canary@127.0.0.1:1',
      commandTimeoutMs: 200,
    });
    const error = (await store
      .claim({ scope: 's', requestId: 'x', ...LEASE })
      .catch((e: unknown) => e)) as Error;
    expect(String(error.message)).not.toContain('s3cret-canary');
    expect(String(error.stack)).not.toContain('s3cret-canary');
    await store.close();
  });
});

describe('redisStore self-test', () => {
  it('reports the server version and a server-timed expiry', async () => {
    const store = redisStore({ url: urls.redis });
    const report = await store.ready();
    expect(report.redisVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(report.probeTtlMs).toBeGreaterThan(5_000);
    expect(report.probeTtlMs).toBeLessThanOrEqual(6_000);
    await store.close();
  });
});
