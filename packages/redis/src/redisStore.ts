import {
  type ClaimOutcome,
  type ClaimRequest,
  type CompleteRequest,
  DEFAULT_MAX_RESULT_BYTES,
  type Logger,
  type SettledTransition,
  type Store,
  StoreClosedError,
  StoreUnavailableError,
  silentLogger,
  type TransitionOutcome,
} from '@idemq/core';
import { assertResultFits, OptionsCheck, recordKey, settle } from '@idemq/core/adapter';
import { Redis } from 'ioredis';
import { Coalescer } from './coalescer.js';
import {
  decodeClaim,
  decodeRecord,
  decodeTransition,
  duplicateTtlMs,
  fingerprintAfterClaim,
} from './codec.js';
import { CompletedCache } from './completedCache.js';
import { ConnectionWatch } from './connectionWatch.js';
import { classifyRedisError } from './errorClassifier.js';
import { withTimeout } from './errors.js';
import { HeldKeys } from './heldKeys.js';
import { orderedWaves } from './orderedWaves.js';
import { OwnerTokens } from './ownerTokens.js';
import { ReplicaWaits } from './replicaWaits.js';
import { type RedisClient, ScriptRunner } from './scriptRunner.js';
import { runSelfTest, type SelfTestReport } from './selfTest.js';
import { warnOnSentinelWithoutFailoverDetector } from './sentinelCheck.js';
import { type SharedArgs, SharedArgsTable } from './sharedArgs.js';

export interface RedisStoreOptions {
  /** `redis://` or `rediss://` URL of a standalone server. Give `url` or `client`. */
  url?: string;
  /** An ioredis client you own (standalone, `Cluster` or Sentinel); never closed by the store. */
  client?: RedisClient;
  /**
   * Prefix of every record key (`<prefix>:{<hash>}`).
   * @default 'idemq'
   */
  prefix?: string;
  /**
   * A store operation that takes longer fails with a retriable `StoreUnavailableError`.
   * @default 2000
   */
  commandTimeoutMs?: number;
  /**
   * Largest stored result, in UTF-8 bytes.
   * @default 65536
   */
  maxResultBytes?: number;
  /**
   * Coalesce operations issued while a call is in flight into one script call per slot.
   * @default true
   */
  coalesce?: boolean;
  /**
   * Most records in one script call (coalesced operations, and each chunk of a `claimMany`).
   * @default 32
   */
  maxBatch?: number;
  /**
   * Coalesced calls each (script, slot) lane keeps on the wire at once: with two, Redis runs one
   * batch while this process handles the previous one.
   * @default 2
   */
  callsInFlight?: number;
  /**
   * Answer repeated duplicates from memory: an id Redis answered `duplicate` for is remembered,
   * and its next duplicates cost 0 round trips. Off by default.
   */
  localCache?: { maxEntries?: number; ttlMs?: number };
  /**
   * After claim and complete, `WAIT` for this many replicas (standalone / Sentinel primaries;
   * refused for a Cluster client). Operations answered together share one `WAIT`. Off by default.
   */
  durability?: { replicas: number; timeoutMs: number };
  logger?: Logger;
}

export const REDIS_STORE_DEFAULTS = Object.freeze({
  prefix: 'idemq',
  commandTimeoutMs: 2_000,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
  coalesce: true,
  maxBatch: 32,
  callsInFlight: 2,
  localCacheMaxEntries: 10_000,
  localCacheTtlMs: 60_000,
});

export interface RedisStore extends Store {
  /** Proves scripts load and expiries work on this server; rejects with a clear error if not. */
  ready(): Promise<SelfTestReport>;
  /**
   * Script calls sent so far, round trips (sequential waits: the per-slot calls of one
   * `claimMany` leave together and count once), local-cache hits, and `WAIT`s sent for
   * `durability` (one per tick's worth of operations, not one each).
   */
  stats(): { scriptCalls: number; roundTrips: number; cacheHits: number; replicaWaits: number };
}

/**
 * The Redis `Store`: every transition is one Lua script, fenced by the owner token and timed by
 * the server's clock. Works on standalone, Sentinel and Cluster (each record's keys share a
 * hash tag).
 *
 * @example
 * const store = redisStore({ url: 'redis://127.0.0.1:6379' });
 * await store.ready();
 * const consumer = createConsumer({ store, transport, source: 'payments', scope: 'billing', handler });
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  new OptionsCheck('redisStore')
    .expect(
      (options.url === undefined) !== (options.client === undefined),
      'give exactly one of url or client',
    )
    .text('url', options.url, true)
    .expect(
      typeof options.url !== 'string' || isRedisUrl(options.url),
      'url must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379',
    )
    .text('prefix', options.prefix, true)
    .integer('commandTimeoutMs', options.commandTimeoutMs, 1, 600_000)
    .integer('maxResultBytes', options.maxResultBytes, 0, 512 * 1024 * 1024)
    .integer('maxBatch', options.maxBatch, 1, 10_000)
    .integer('callsInFlight', options.callsInFlight, 1, 64)
    .integer('localCache.maxEntries', options.localCache?.maxEntries, 1)
    .integer('localCache.ttlMs', options.localCache?.ttlMs, 1)
    .integer('durability.replicas', options.durability?.replicas, 1, 100)
    .integer('durability.timeoutMs', options.durability?.timeoutMs, 0)
    .expect(
      options.durability === undefined ||
        options.durability.timeoutMs <
          (options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs),
      'durability.timeoutMs must be below commandTimeoutMs (WAIT runs within the command timeout)',
    )
    .expect(
      options.durability === undefined ||
        options.client === undefined ||
        !('nodes' in options.client),
      'durability is for standalone and Sentinel clients: on a Cluster a WAIT would have to go to each written node',
    )
    .expect(
      options.prefix === undefined || !/[{}]/.test(options.prefix),
      "prefix must not contain { or }: the hash tag is the store's own",
    )
    .done();

  const prefix = options.prefix ?? REDIS_STORE_DEFAULTS.prefix;
  const timeoutMs = options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs;
  const maxResultBytes = options.maxResultBytes ?? REDIS_STORE_DEFAULTS.maxResultBytes;
  const logger = options.logger ?? silentLogger;
  const ownsClient = options.client === undefined;
  const client: RedisClient =
    options.client ??
    new Redis(options.url as string, {
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 1,
      // Keep reconnecting quickly but boundedly while the server is down.
      retryStrategy: (times) => Math.min(50 * times, 1_000),
      lazyConnect: false,
    });
  // Owned: its errors are surfaced per operation as typed errors, naming the endpoint.
  const connection = new ConnectionWatch(client, ownsClient);
  warnOnSentinelWithoutFailoverDetector(client, logger);
  const isCluster = 'nodes' in client;
  const runner = new ScriptRunner(client);
  const batcher = new Coalescer({
    runner,
    perSlot: isCluster,
    timeoutMs,
    // Without coalescing every operation is a call of its own, sent at once.
    ...((options.coalesce ?? REDIS_STORE_DEFAULTS.coalesce)
      ? {
          maxBatch: options.maxBatch ?? REDIS_STORE_DEFAULTS.maxBatch,
          callsInFlight: options.callsInFlight ?? REDIS_STORE_DEFAULTS.callsInFlight,
        }
      : { maxBatch: 1, callsInFlight: Number.MAX_SAFE_INTEGER }),
  });
  const cache = options.localCache
    ? new CompletedCache(
        options.localCache.maxEntries ?? REDIS_STORE_DEFAULTS.localCacheMaxEntries,
        options.localCache.ttlMs ?? REDIS_STORE_DEFAULTS.localCacheTtlMs,
      )
    : undefined;
  const tokens = new OwnerTokens();
  let closed = false;

  const keyOf = (id: { scope: string; requestId: string }) =>
    recordKey(prefix, id.scope, id.requestId);
  const heldKeys = new HeldKeys();
  /** A held claim's key: hashed at its claim, reused by the operations that follow. */
  const heldKeyOf = (held: { scope: string; requestId: string; token: string }) =>
    heldKeys.get(held.token, held.scope, held.requestId) ?? keyOf(held);
  /** As `heldKeyOf`, for the operation that ends the claim. */
  const endingKeyOf = (held: { scope: string; requestId: string; token: string }) =>
    heldKeys.take(held.token, held.scope, held.requestId) ?? keyOf(held);

  function assertOpen(): void {
    if (closed) throw new StoreClosedError();
  }

  /** One `WAIT`; `replicaWaits` shares it among the operations of a tick. */
  async function waitForReplicas(): Promise<void> {
    const durability = options.durability;
    if (!durability) return;
    const acked = await withTimeout(
      (client as Redis).wait(durability.replicas, durability.timeoutMs),
      timeoutMs,
      'WAIT',
    );
    if (acked < durability.replicas) {
      throw new StoreUnavailableError(
        `Redis WAIT failed: only ${acked} of ${durability.replicas} replicas acknowledged`,
        { reason: 'busy' },
      );
    }
  }

  const replicaWaits = new ReplicaWaits(waitForReplicas);

  function fromCache(key: string, request: ClaimRequest): ClaimOutcome | undefined {
    const cached = cache?.get(key, request.fingerprint);
    if (!cached) return undefined;
    return {
      status: 'duplicate',
      completedAt: cached.completedAt,
      ...(cached.result === undefined ? {} : { result: cached.result }),
      ...(cached.resultOmitted === undefined ? {} : { resultOmitted: cached.resultOmitted }),
    };
  }

  // Interned per settings: every claim (complete, …) of one engine shares its lane and calls.
  const claimShared = new SharedArgsTable('claim', (leaseMs: number, retainMs: number) => [
    String(leaseMs),
    String(retainMs),
    String(leaseMs + retainMs),
    cache ? '1' : '0',
  ]);
  // What a completion stores: '1' its result, '0' nothing, else why there is no result.
  const completeShared = new SharedArgsTable('complete', (ttlMs: number, stores: string) => [
    String(ttlMs),
    stores,
  ]);
  const failShared = new SharedArgsTable('fail', (ttlMs: number) => [String(ttlMs)]);
  const renewShared = new SharedArgsTable('renew', (leaseMs: number) => [String(leaseMs)]);
  const releaseShared: SharedArgs = { id: 'release', values: [] };
  const sharedOfClaim = (request: ClaimRequest) =>
    claimShared.get(request.leaseMs, request.retainMs);
  const claimArgs = (token: string, request: ClaimRequest) => [token, request.fingerprint ?? ''];

  async function claim(request: ClaimRequest): Promise<ClaimOutcome> {
    assertOpen();
    const key = keyOf(request);
    const cached = fromCache(key, request);
    if (cached) return cached;
    const token = tokens.next();
    let reply: unknown;
    try {
      reply = await batcher.run('claim', key, claimArgs(token, request), sharedOfClaim(request));
    } catch (error) {
      throw connection.explain('claim', error);
    }
    return afterClaim(key, token, request, reply);
  }

  /** Synchronous unless replicas must acknowledge: an await per claim is a microtask turn. */
  function afterClaim(
    key: string,
    token: string,
    request: ClaimRequest,
    reply: unknown,
  ): ClaimOutcome | Promise<ClaimOutcome> {
    const outcome = decodeClaim(reply, token, request.leaseMs);
    if (outcome.status === 'claimed') {
      heldKeys.hold(token, request.scope, request.requestId, key);
      return options.durability ? replicaWaits.acknowledged().then(() => outcome) : outcome;
    }
    // Only ids Redis answered as duplicates are remembered: their repeats are what the cache is
    // for, and the first deliveries, most messages, pay no more than a lookup that misses.
    if (outcome.status === 'duplicate' && cache) {
      cache.remember(
        key,
        {
          completedAt: outcome.completedAt,
          fingerprint: fingerprintAfterClaim(reply, request.fingerprint),
          result: outcome.result,
          resultOmitted: outcome.resultOmitted,
        },
        // Never past the record's own expiry.
        duplicateTtlMs(reply),
      );
    }
    return outcome;
  }

  async function transition(
    script: 'complete' | 'fail' | 'renew' | 'release',
    key: string,
    args: (string | number)[],
    shared: SharedArgs,
  ): Promise<TransitionOutcome> {
    assertOpen();
    let reply: unknown;
    try {
      reply = await batcher.run(script, key, args, shared);
    } catch (error) {
      throw connection.explain(script, error);
    }
    return decodeTransition(script, reply);
  }

  const completeArgs = (request: CompleteRequest) =>
    request.result === undefined ? [request.token] : [request.token, request.result];
  const sharedOfComplete = (request: CompleteRequest) =>
    completeShared.get(
      request.ttlMs,
      request.result === undefined ? (request.resultOmitted ?? '0') : '1',
    );

  /** Waits for replicas when asked to. */
  function afterComplete(
    outcome: TransitionOutcome,
  ): TransitionOutcome | Promise<TransitionOutcome> {
    if (outcome === 'ok' && options.durability) {
      return replicaWaits.acknowledged().then(() => outcome);
    }
    return outcome;
  }

  /** One record's element of a `completeMany` reply: a failed call's error, or its outcome. */
  async function completionOf(reply: unknown): Promise<TransitionOutcome> {
    if (reply instanceof Error) throw connection.explain('completeMany', reply);
    return afterComplete(decodeTransition('complete', reply));
  }

  /**
   * A batch's operations as waves in request order per key (`orderedWaves`), each wave's calls
   * all on the wire at once; yields each wave with its replies (an `Error` for a failed call's).
   */
  async function* inWaves<P extends { key: string }>(
    script: 'claim' | 'complete',
    pending: readonly P[],
    sharedOf: (p: P) => SharedArgs,
    argsOf: (p: P) => (string | number)[],
  ): AsyncGenerator<readonly [P[], unknown[]]> {
    for (const wave of orderedWaves(
      pending,
      (p) => p.key,
      (p) => sharedOf(p).id,
    )) {
      const entries = wave.map((p) => ({ key: p.key, args: argsOf(p), shared: sharedOf(p) }));
      yield [wave, await batcher.runBatch(script, entries)];
    }
  }

  const store: RedisStore = {
    claim,

    async claimMany(requests) {
      assertOpen();
      const outcomes: (ClaimOutcome | undefined)[] = requests.map((request) =>
        fromCache(keyOf(request), request),
      );
      const pending = requests.flatMap((request, index) =>
        outcomes[index] ? [] : [{ index, request, key: keyOf(request), token: tokens.next() }],
      );
      for await (const [wave, replies] of inWaves(
        'claim',
        pending,
        (p) => sharedOfClaim(p.request),
        (p) => claimArgs(p.token, p.request),
      )) {
        // A claim batch answers as a whole: claims a failed call left behind lapse unused.
        const failed = replies.find((reply) => reply instanceof Error);
        if (failed) throw connection.explain('claimMany', failed);
        await Promise.all(
          wave.map(async (p, i) => {
            outcomes[p.index] = await afterClaim(p.key, p.token, p.request, replies[i]);
          }),
        );
      }
      return outcomes as ClaimOutcome[];
    },

    async complete(request) {
      assertResultFits(request.result, maxResultBytes);
      const key = endingKeyOf(request);
      const outcome = await transition(
        'complete',
        key,
        completeArgs(request),
        sharedOfComplete(request),
      );
      return afterComplete(outcome);
    },

    async completeMany(requests) {
      assertOpen();
      const outcomes: SettledTransition[] = new Array(requests.length);
      const pending: { index: number; request: CompleteRequest; key: string }[] = [];
      requests.forEach((request, index) => {
        try {
          assertResultFits(request.result, maxResultBytes);
          pending.push({ index, request, key: endingKeyOf(request) });
        } catch (error) {
          outcomes[index] = { status: 'rejected', reason: error as Error };
        }
      });
      for await (const [wave, replies] of inWaves(
        'complete',
        pending,
        (p) => sharedOfComplete(p.request),
        (p) => completeArgs(p.request),
      )) {
        await Promise.all(
          wave.map(async (p, i) => {
            outcomes[p.index] = await settle(completionOf(replies[i]));
          }),
        );
      }
      return outcomes;
    },

    async fail(request) {
      const { name, message, code } = request.error;
      return transition(
        'fail',
        endingKeyOf(request),
        [request.token, name, message, code ?? ''],
        failShared.get(request.ttlMs),
      );
    },

    async renew(request) {
      return transition(
        'renew',
        heldKeyOf(request),
        [request.token],
        renewShared.get(request.leaseMs),
      );
    },

    async release(request) {
      return transition('release', endingKeyOf(request), [request.token], releaseShared);
    },

    async inspect(id) {
      assertOpen();
      try {
        const reply = await withTimeout(
          runner.run('inspect', [keyOf(id)], []),
          timeoutMs,
          'inspect',
        );
        return decodeRecord(id, reply as unknown[]);
      } catch (error) {
        throw connection.explain('inspect', classifyRedisError('inspect', error));
      }
    },

    async ready() {
      assertOpen();
      try {
        return await runSelfTest({ client, runner, prefix, timeoutMs, logger });
      } catch (error) {
        throw connection.explain('ready()', error);
      }
    },

    stats() {
      return {
        scriptCalls: runner.calls,
        roundTrips: batcher.roundTrips,
        cacheHits: cache?.hits ?? 0,
        replicaWaits: replicaWaits.sent,
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      if (ownsClient) await client.quit().catch(() => client.disconnect());
    },
  };
  return store;
}

function isRedisUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'redis:' || protocol === 'rediss:';
  } catch {
    return false;
  }
}
