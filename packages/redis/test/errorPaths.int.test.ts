import {
  type ClaimOutcome,
  createConsumer,
  ErrorCodes,
  memoryTransport,
  StoreRejectedError,
  StoreUnavailableError,
} from '@idemq/core';
import { recordKey } from '@idemq/core/adapter';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RedisStore, redisStore } from '../src/index.js';
import { uniquePrefix, until } from './helpers.js';
import { type RedisProcess, redisProcess } from './redisProcess.js';

const LEASE = { leaseMs: 5_000, retainMs: 5_000 };
const scope = 'errors';

/** What a settled operation came to: its value, or the error it rejected with. */
async function settle<T>(operation: Promise<T>): Promise<T | Error> {
  return operation.catch((error: unknown) => error as Error);
}

const refusedRecord = {
  constructor: StoreRejectedError,
  code: ErrorCodes.STORE_REJECTED,
  affects: 'record',
  retriable: false,
};

// A private server: these tests change its configuration (maxmemory) and write foreign values.
describe('redisStore error paths on a private redis-server', () => {
  let server: RedisProcess;
  let admin: Redis;
  let store: RedisStore;
  let prefix: string;
  const keyOf = (requestId: string) => recordKey(prefix, scope, requestId);
  const claim = (requestId: string) => store.claim({ scope, requestId, ...LEASE });

  beforeAll(async () => {
    server = await redisProcess(['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    await server.start();
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.destroy();
  });
  beforeEach(async () => {
    await admin.config('SET', 'maxmemory', '0');
    prefix = uniquePrefix();
    store = redisStore({ url: server.url, prefix, commandTimeoutMs: 2_000 });
    await store.ready();
    return () => store.close();
  });

  it('a string where a record lives (WRONGTYPE): that claim is refused for the record, the string untouched', async () => {
    await admin.set(keyOf('foreign'), 'not a record');
    const error = await settle(claim('foreign'));
    expect(error).toMatchObject(refusedRecord);
    expect((error as Error).message).toMatch(/^Redis claim refused the record: WRONGTYPE/);
    expect(await admin.get(keyOf('foreign'))).toBe('not a record');
    expect(await admin.type(keyOf('foreign'))).toBe('string');
  });

  it('a WRONGTYPE key inside a coalesced claim call: the healthy keys are claimed, only the bad one is refused', async () => {
    await admin.set(keyOf('bad'), 'not a record');
    const calls = store.stats().scriptCalls;
    // Issued in one tick: one script call carries all five keys, the bad one in the middle.
    const ids = ['h1', 'h2', 'bad', 'h3', 'h4'];
    const outcomes = await Promise.all(ids.map((id) => settle(claim(id))));
    expect(store.stats().scriptCalls - calls).toBe(1);
    ids.forEach((id, i) => {
      const outcome = outcomes[i];
      if (id === 'bad') expect(outcome, id).toMatchObject(refusedRecord);
      else expect(outcome, id).toMatchObject({ status: 'claimed', attempt: 1 });
    });
    // The healthy callers were told what the store holds: their claims, before and after the bad key.
    for (const id of ['h1', 'h2', 'h3', 'h4']) {
      expect((await store.inspect({ scope, requestId: id }))?.state, id).toBe('IN_PROGRESS');
    }
    expect(await admin.get(keyOf('bad'))).toBe('not a record');
  });

  it('a record replaced by a string between claim and completion: the other completions of the call go through', async () => {
    const claimed = (await Promise.all(['c1', 'c2', 'c3'].map(claim))) as Extract<
      ClaimOutcome,
      { status: 'claimed' }
    >[];
    await admin.del(keyOf('c2'));
    await admin.set(keyOf('c2'), 'replaced');
    const calls = store.stats().scriptCalls;
    const completions = await Promise.all(
      ['c1', 'c2', 'c3'].map((id, i) =>
        settle(
          store.complete({ scope, requestId: id, token: claimed[i]?.token ?? '', ttlMs: 60_000 }),
        ),
      ),
    );
    expect(store.stats().scriptCalls - calls).toBe(1);
    expect(completions[0]).toBe('ok');
    expect(completions[1]).toMatchObject(refusedRecord);
    expect((completions[1] as Error).message).toMatch(/^Redis complete refused the record/);
    expect(completions[2]).toBe('ok');
    expect((await store.inspect({ scope, requestId: 'c1' }))?.state).toBe('COMPLETED');
    expect((await store.inspect({ scope, requestId: 'c3' }))?.state).toBe('COMPLETED');
    expect(await admin.get(keyOf('c2'))).toBe('replaced');
  });

  it('a Lua error on a foreign hash in the middle of a call answers for that key alone', async () => {
    // IN_PROGRESS without a readable lease: the claim script's comparison fails in Lua.
    await admin.hset(keyOf('garbled'), 's', 'IN_PROGRESS', 'l', 'soon');
    const ids = ['g1', 'garbled', 'g2'];
    const outcomes = await Promise.all(ids.map((id) => settle(claim(id))));
    expect(outcomes[0]).toMatchObject({ status: 'claimed' });
    expect(outcomes[1]).toMatchObject(refusedRecord);
    expect((outcomes[1] as Error).message).toMatch(/user_script:\d+: attempt to compare/);
    expect(outcomes[2]).toMatchObject({ status: 'claimed' });
    expect(await admin.hgetall(keyOf('garbled'))).toEqual({ s: 'IN_PROGRESS', l: 'soon' });

    // claimMany has one caller: it rejects with the record's error; the others of the batch are
    // claimed and lapse like any unused claim (the Store contract).
    const batch = await settle(
      store.claimMany(['m1', 'garbled', 'm2'].map((requestId) => ({ scope, requestId, ...LEASE }))),
    );
    expect(batch).toMatchObject(refusedRecord);
    expect((await store.inspect({ scope, requestId: 'm1' }))?.state).toBe('IN_PROGRESS');
  });

  it('a reply the store cannot read (a COMPLETED hash with no time in it) is refused for the record, not a NaN duplicate', async () => {
    await admin.hset(keyOf('odd'), 's', 'COMPLETED', 'c', 'yesterday');
    const error = await settle(claim('odd'));
    expect(error).toMatchObject(refusedRecord);
    expect((error as Error).message).toMatch(/unexpected reply .*duplicate.*yesterday/);
  });

  it('out of memory under noeviction: new claims fail retriably (out-of-memory), nothing is written, reads still answer; claims go through once memory frees', async () => {
    const done = await claim('done-before');
    const held = await claim('held-before');
    if (done.status !== 'claimed' || held.status !== 'claimed') throw new Error('not claimed');
    await store.complete({ scope, requestId: 'done-before', token: done.token, ttlMs: 60_000 });

    // Memory held by a value that expires, with the limit below what is used now.
    await admin.set('filler', 'x'.repeat(4 * 1024 * 1024), 'PX', 1_500);
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
    await admin.config('SET', 'maxmemory', String(used - 1024 * 1024));
    const keysBefore = await admin.dbsize();

    const ids = ['oom1', 'done-before', 'oom2', 'oom3'];
    const outcomes = await Promise.all(ids.map((id) => settle(claim(id))));
    for (const i of [0, 2, 3]) {
      const error = outcomes[i];
      expect(error, ids[i]).toBeInstanceOf(StoreUnavailableError);
      expect(error, ids[i]).toMatchObject({
        code: ErrorCodes.STORE_UNAVAILABLE,
        retriable: true,
        reason: 'out-of-memory',
      });
      expect((error as Error).message).toMatch(/OOM command not allowed/);
    }
    // A duplicate needs no memory: answered from the record as always.
    expect(outcomes[1]).toMatchObject({ status: 'duplicate' });
    expect(await admin.dbsize()).toBe(keysBefore);
    for (const id of ['oom1', 'oom2', 'oom3']) expect(await admin.exists(keyOf(id))).toBe(0);
    // A completion deletes fields before it writes: Redis lets it through, the work is recorded.
    expect(
      await store.complete({ scope, requestId: 'held-before', token: held.token, ttlMs: 60_000 }),
    ).toBe('ok');
    expect((await store.inspect({ scope, requestId: 'held-before' }))?.state).toBe('COMPLETED');

    // The filler expires, memory frees, and the same ids are claimed as new.
    await until(
      'claims after memory frees',
      async () => (await settle(claim('oom1'))) instanceof Error === false,
      10_000,
    );
    expect(await claim('oom2')).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await store.inspect({ scope, requestId: 'oom1' })).toMatchObject({
      state: 'IN_PROGRESS',
      attempt: 1,
    });
  });

  it('a consumer dead-letters the message whose record is foreign and processes the others', async () => {
    await admin.set(keyOf('foreign-msg'), 'not a record');
    const transport = memoryTransport();
    const handled: string[] = [];
    const consumer = createConsumer({
      store,
      transport,
      source: 'errors-orders',
      scope,
      storeErrorRetryDelayMs: 10,
      handler: (message) => {
        handled.push(message.requestId);
      },
    });
    const deadLetters: { requestId: string | undefined; code: string }[] = [];
    consumer.on('dead-letter', (event) => deadLetters.push(event));
    await consumer.start();
    try {
      await transport.publish('errors-orders', { requestId: 'foreign-msg', body: { n: 1 } });
      await transport.publish('errors-orders', { requestId: 'fine-msg', body: { n: 2 } });
      await until(
        'both messages settled',
        async () => deadLetters.length + handled.length >= 2,
        5_000,
      );
      expect(deadLetters).toEqual([
        expect.objectContaining({ requestId: 'foreign-msg', code: ErrorCodes.STORE_REJECTED }),
      ]);
      expect(handled).toEqual(['fine-msg']);
    } finally {
      await consumer.stop();
      await transport.close();
    }
  });
});
