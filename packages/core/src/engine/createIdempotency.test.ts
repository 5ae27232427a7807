import diagnostics from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import {
  HandlerFailedError,
  InvalidOptionsError,
  InvalidRequestIdError,
  PayloadNotFingerprintableError,
  StoreRejectedError,
  StoreUnavailableError,
} from '../errors/index.js';
import { ResultNotSerializableError } from '../errors/store.js';
import { silentLogger } from '../observability/logger.js';
import { memoryStore } from '../store/memoryStore.js';
import type { Store } from '../store/store.js';
import { faultyStore, manualClock } from '../testing/index.js';
import { createIdempotency } from './createIdempotency.js';
import type { HandlerContext, IdempotencyOptions } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise the test resolves by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

let scopeCounter = 0;
function setup(options: Partial<IdempotencyOptions> = {}) {
  const clock = manualClock();
  const store = options.store ?? memoryStore({ clock });
  const scope = `scope-${++scopeCounter}`;
  const idem = createIdempotency({ store, scope, ...options });
  return { idem, store, clock, scope };
}

describe('createIdempotency run()', () => {
  it('runs fn once and resolves processed with its result, attempt and fencing token', async () => {
    const { idem, store, scope } = setup();
    let calls = 0;
    const outcome = await idem.run('req-1', (ctx) => {
      calls += 1;
      expect(ctx.requestId).toBe('req-1');
      expect(ctx.attempt).toBe(1);
      expect(ctx.signal.aborted).toBe(false);
      expect(ctx.previousError).toBeUndefined();
      return 'charged';
    });
    expect(outcome).toEqual({
      status: 'processed',
      result: 'charged',
      attempt: 1,
      fencingToken: 1,
    });
    expect(calls).toBe(1);
    expect(await store.inspect({ scope, requestId: 'req-1' })).toMatchObject({
      state: 'COMPLETED',
      attempt: 1,
    });
  });

  it('a second run is a duplicate and does not run fn (no result without storeResults)', async () => {
    const { idem, store, scope } = setup();
    await idem.run('dup', () => ({ id: 1 }));
    let calls = 0;
    const outcome = await idem.run('dup', () => {
      calls += 1;
      return { id: 2 };
    });
    expect(outcome).toEqual({ status: 'duplicate', completedAt: expect.any(Number) });
    expect('result' in outcome).toBe(false);
    expect(calls).toBe(0);
    expect((await store.inspect({ scope, requestId: 'dup' }))?.result).toBeUndefined();
  });

  it('with storeResults a duplicate gets the stored result back exactly', async () => {
    const { idem } = setup({ storeResults: true });
    const result = {
      id: 'ch_1',
      amount: 1050,
      ratio: 0.1 + 0.2,
      unicode: 'zoë 💶 \u0000 "quoted"',
      nested: [1, null, { deep: true }, ''],
      negativeZeroish: -1e-7,
    };
    const first = await idem.run('stored', () => result);
    expect(first).toMatchObject({ status: 'processed', result });
    const second = await idem.run('stored', () => ({ other: true }));
    expect(second).toEqual({ status: 'duplicate', result, completedAt: expect.any(Number) });
    expect(JSON.stringify((second as { result: unknown }).result)).toBe(JSON.stringify(result));
  });

  it('scopes are independent namespaces', async () => {
    const store = memoryStore();
    const a = createIdempotency({ store, scope: 'a' });
    const b = createIdempotency({ store, scope: 'b' });
    await a.run('same-id', () => 1);
    await expect(b.run('same-id', () => 2)).resolves.toMatchObject({ status: 'processed' });
  });

  it('a concurrent run of the same id is in-progress and does not run fn', async () => {
    const { idem } = setup({ leaseMs: 30_000, inProgressRetryMaxDelayMs: 60_000 });
    const gate = deferred();
    const first = idem.run('busy', async () => {
      await gate.promise;
      return 'first';
    });
    let secondCalls = 0;
    const second = await idem.run('busy', () => {
      secondCalls += 1;
      return 'second';
    });
    expect(second).toEqual({ status: 'in-progress', retryAfterMs: 30_000, attempt: 1 });
    expect(secondCalls).toBe(0);
    gate.resolve();
    await expect(first).resolves.toMatchObject({ status: 'processed', result: 'first' });
  });

  it('in-progress reports the lease time actually left', async () => {
    const { idem, clock } = setup({
      leaseMs: 30_000,
      heartbeat: false,
      inProgressRetryMaxDelayMs: 60_000,
    });
    const gate = deferred();
    const first = idem.run('left', () => gate.promise);
    clock.advance(12_000);
    await expect(idem.run('left', () => 0)).resolves.toEqual({
      status: 'in-progress',
      retryAfterMs: 18_000,
      attempt: 1,
    });
    gate.resolve();
    await first;
  });

  it('in-progress retryAfterMs is the lease left, at most inProgressRetryMaxDelayMs (5 s by default)', async () => {
    const { idem, clock } = setup({ leaseMs: 30_000, heartbeat: false });
    const gate = deferred();
    const first = idem.run('bounded', () => gate.promise);
    await expect(idem.run('bounded', () => 0)).resolves.toMatchObject({ retryAfterMs: 5_000 });
    clock.advance(27_500); // less than the bound is left: the lease decides
    await expect(idem.run('bounded', () => 0)).resolves.toMatchObject({ retryAfterMs: 2_500 });
    gate.resolve();
    await first;
  });

  it('inProgressRetryMaxDelayMs is honoured by run() and validated', async () => {
    const { idem } = setup({ leaseMs: 30_000, inProgressRetryMaxDelayMs: 1_200 });
    const gate = deferred();
    const first = idem.run('bound-1200', () => gate.promise);
    await expect(idem.run('bound-1200', () => 0)).resolves.toEqual({
      status: 'in-progress',
      retryAfterMs: 1_200,
      attempt: 1,
    });
    gate.resolve();
    await first;
    expect(() =>
      createIdempotency({ store: memoryStore(), scope: 's', inProgressRetryMaxDelayMs: -1 }),
    ).toThrow(InvalidOptionsError);
  });

  it('the same id with a different payload is key-reuse and fn does not run', async () => {
    const { idem } = setup();
    await idem.run('pay-1', () => 'ok', { payload: '{"amount":10}' });
    let calls = 0;
    const reused = await idem.run('pay-1', () => calls++, { payload: '{"amount":99}' });
    expect(reused).toEqual({ status: 'key-reuse' });
    expect(calls).toBe(0);
    // The same payload (as bytes this time) is a plain duplicate.
    const same = await idem.run('pay-1', () => calls++, {
      payload: new TextEncoder().encode('{"amount":10}'),
    });
    expect(same).toEqual({ status: 'duplicate', completedAt: expect.any(Number) });
  });

  it('an object payload (a parsed JSON body) is fingerprinted canonically, not a raw TypeError', async () => {
    const { idem } = setup();
    await expect(
      idem.run('body-1', () => 'ok', { payload: { amount: 10, currency: 'EUR' } }),
    ).resolves.toMatchObject({ status: 'processed' });
    let calls = 0;
    const reordered = await idem.run('body-1', () => calls++, {
      payload: { currency: 'EUR', amount: 10 },
    });
    expect(reordered).toEqual({ status: 'duplicate', completedAt: expect.any(Number) });
    const changed = await idem.run('body-1', () => calls++, {
      payload: { currency: 'EUR', amount: 11 },
    });
    expect(changed).toEqual({ status: 'key-reuse' });
    expect(calls).toBe(0);
  });

  it('a payload that cannot be fingerprinted rejects with a typed error before anything runs', async () => {
    const { idem, store, scope } = setup();
    let calls = 0;
    const error = await idem
      .run('body-2', () => calls++, { payload: { amount: 10n } })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PayloadNotFingerprintableError);
    expect(error).toMatchObject({ code: ErrorCodes.PAYLOAD_NOT_FINGERPRINTABLE, retriable: false });
    expect(calls).toBe(0);
    expect(await store.inspect({ scope, requestId: 'body-2' })).toBeUndefined();
  });

  it('key-reuse is detected while the first claim is still in progress too', async () => {
    const { idem } = setup();
    const gate = deferred();
    const first = idem.run('pay-2', () => gate.promise, { payload: 'a' });
    await expect(idem.run('pay-2', () => 0, { payload: 'b' })).resolves.toEqual({
      status: 'key-reuse',
    });
    gate.resolve();
    await first;
  });

  describe('handler failures', () => {
    it('rethrows the error, records FAILED, and the next run is attempt 2 with previousError', async () => {
      const { idem, store, scope } = setup();
      const boom = new TypeError('card declined');
      await expect(
        idem.run('fail-1', () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.inspect({ scope, requestId: 'fail-1' })).toMatchObject({
        state: 'FAILED',
        attempt: 1,
        lastError: { name: 'TypeError', message: 'card declined' },
      });

      let seen: HandlerContext | undefined;
      const outcome = await idem.run('fail-1', (ctx) => {
        seen = ctx;
        return 'second time lucky';
      });
      expect(outcome).toMatchObject({ status: 'processed', attempt: 2 });
      expect(seen?.attempt).toBe(2);
      expect(seen?.previousError).toEqual({ name: 'TypeError', message: 'card declined' });
    });

    it('an async rejection is recorded the same way', async () => {
      const { idem, store, scope } = setup();
      await expect(
        idem.run('fail-2', async () => {
          await sleep(1);
          throw new RangeError('too big');
        }),
      ).rejects.toThrow('too big');
      expect((await store.inspect({ scope, requestId: 'fail-2' }))?.lastError).toEqual({
        name: 'RangeError',
        message: 'too big',
      });
    });

    it('keeps the code of an error that has one', async () => {
      const { idem, store, scope } = setup();
      const error = Object.assign(new Error('conn reset'), { code: 'ECONNRESET' });
      await expect(
        idem.run('fail-3', () => {
          throw error;
        }),
      ).rejects.toBe(error);
      expect((await store.inspect({ scope, requestId: 'fail-3' }))?.lastError).toEqual({
        name: 'Error',
        message: 'conn reset',
        code: 'ECONNRESET',
      });
    });

    it.each([
      ['a string', 'plain string', /"plain string"/],
      ['an object', { reason: 'nope', status: 402 }, /\{"reason":"nope","status":402\}/],
      ['undefined', undefined, /undefined/],
      ['null', null, /null/],
      ['a number', 42, /42/],
    ])(
      'throwing %s gives a HandlerFailedError and a clear FAILED record',
      async (_n, thrown, detail) => {
        const { idem, store, scope } = setup();
        const error = await idem
          .run('odd', () => {
            throw thrown;
          })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HandlerFailedError);
        expect(error).toMatchObject({ code: ErrorCodes.HANDLER_FAILED, retriable: true });
        expect((error as Error).cause).toBe(thrown);
        expect((error as Error).message).toMatch(detail);
        const record = await store.inspect({ scope, requestId: 'odd' });
        expect(record).toMatchObject({
          state: 'FAILED',
          attempt: 1,
          lastError: { name: 'HandlerFailedError', code: ErrorCodes.HANDLER_FAILED },
        });
        expect(record?.lastError?.message).toMatch(detail);
      },
    );

    it('a cyclic thrown object still gives a readable FAILED record', async () => {
      const { idem, store, scope } = setup();
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      await expect(
        idem.run('cyc-throw', () => {
          throw cyclic;
        }),
      ).rejects.toBeInstanceOf(HandlerFailedError);
      expect((await store.inspect({ scope, requestId: 'cyc-throw' }))?.lastError).toMatchObject({
        name: 'HandlerFailedError',
        message: expect.stringContaining('[object Object]'),
      });
    });
  });

  describe('leases', () => {
    it("the heartbeat keeps a slow fn's lease alive past leaseMs: a concurrent run stays out", async () => {
      // Real timers: the heartbeat is what is under test. leaseMs 90, fn 300 ms.
      const { idem } = setup({ store: memoryStore(), leaseMs: 90 });
      const renewed: number[] = [];
      let runs = 0;
      const slow = idem.run(
        'slow',
        async () => {
          runs += 1;
          await sleep(300);
          return 'done';
        },
        { onLeaseRenewed: (ms) => void renewed.push(ms) },
      );
      const intruders: unknown[] = [];
      for (const at of [120, 220]) {
        await sleep(at - (at === 120 ? 0 : 120));
        intruders.push(
          await idem.run('slow', () => {
            runs += 1;
            return 'intruder';
          }),
        );
      }
      expect(intruders).toEqual([
        { status: 'in-progress', retryAfterMs: expect.any(Number), attempt: 1 },
        { status: 'in-progress', retryAfterMs: expect.any(Number), attempt: 1 },
      ]);
      await expect(slow).resolves.toMatchObject({
        status: 'processed',
        result: 'done',
        attempt: 1,
      });
      expect(runs).toBe(1);
      expect(renewed.length).toBeGreaterThanOrEqual(3);
      expect(new Set(renewed)).toEqual(new Set([90]));
    });

    it('without a heartbeat another run takes over a slow fn, which gets lease-lost', async () => {
      const { idem, store, clock, scope } = setup({
        heartbeat: false,
        leaseMs: 1_000,
        storeResults: true,
      });
      const gate = deferred();
      const first = idem.run('takeover', async () => {
        await gate.promise;
        return 'zombie';
      });
      clock.advance(1_001);
      const second = await idem.run('takeover', (ctx) => `owner@${ctx.attempt}`);
      expect(second).toMatchObject({ status: 'processed', result: 'owner@2', attempt: 2 });
      gate.resolve();
      // fn returned: the caller still gets its result, though the record is not its own.
      await expect(first).resolves.toEqual({ status: 'lease-lost', attempt: 1, result: 'zombie' });
      // The zombie's completion was refused: the record is the new owner's.
      expect(await store.inspect({ scope, requestId: 'takeover' })).toMatchObject({
        state: 'COMPLETED',
        attempt: 2,
        result: '"owner@2"',
      });
      await expect(idem.run('takeover', () => 'again')).resolves.toEqual({
        status: 'duplicate',
        result: 'owner@2',
        completedAt: expect.any(Number),
      });
    });

    it('a zombie that fails after a takeover cannot mark the record FAILED', async () => {
      const { idem, store, clock, scope } = setup({ heartbeat: false, leaseMs: 1_000 });
      const gate = deferred();
      const first = idem.run('zombie-fail', async () => {
        await gate.promise;
        throw new Error('late failure');
      });
      clock.advance(1_001);
      const ownerGate = deferred();
      const second = idem.run('zombie-fail', () => ownerGate.promise);
      gate.resolve();
      await expect(first).resolves.toEqual({ status: 'lease-lost', attempt: 1 });
      expect(await store.inspect({ scope, requestId: 'zombie-fail' })).toMatchObject({
        state: 'IN_PROGRESS',
        attempt: 2,
      });
      ownerGate.resolve();
      await expect(second).resolves.toMatchObject({ status: 'processed', attempt: 2 });
    });

    it('ctx.signal aborts when the heartbeat learns the lease was lost', async () => {
      const { idem, clock } = setup({ leaseMs: 30 }); // heartbeat every 10 ms (real time)
      let signal: AbortSignal | undefined;
      const first = idem.run('lost', (ctx) => {
        signal = ctx.signal;
        return new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        });
      });
      await sleep(25); // a couple of renewals succeed
      expect(signal?.aborted).toBe(false);
      clock.advance(10_000); // store time jumps past the lease...
      const gate = deferred();
      const second = idem.run('lost', () => gate.promise); // ...and another owner takes over
      await expect(first).resolves.toEqual({ status: 'lease-lost', attempt: 1 });
      expect(signal?.aborted).toBe(true);
      expect((signal?.reason as Error | undefined)?.message).toMatch(/lease on lost lost/);
      gate.resolve();
      await expect(second).resolves.toMatchObject({ status: 'processed', attempt: 2 });
    });

    it('ctx.signal aborts when the store cannot confirm the lease for a whole leaseMs', async () => {
      const store = faultyStore(memoryStore());
      const { idem } = setup({ store, leaseMs: 30 });
      const started = deferred<AbortSignal>();
      const outcome = idem.run('unconfirmed', (ctx) => {
        started.resolve(ctx.signal);
        return new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        });
      });
      const signal = await started.promise;
      let abortedAfterMs = Number.NaN;
      const downAt = performance.now();
      signal.addEventListener('abort', () => {
        abortedAfterMs = performance.now() - downAt;
      });
      store.setDown(true);
      // The failure cannot be recorded either: the caller learns the store is down.
      await expect(outcome).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(signal.aborted).toBe(true);
      // Renewals were refused, and one refusal alone did not abort: the lease was confirmed at
      // most a third of leaseMs before the store went down, so the abort waits the rest of it.
      expect(store.refused).toBeGreaterThanOrEqual(1);
      expect(abortedAfterMs).toBeGreaterThanOrEqual(15);
    });

    it('a failing async onLeaseRenewed hook neither breaks the run nor leaks an unhandled rejection', async () => {
      const { idem } = setup({ store: memoryStore(), leaseMs: 30 });
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      let hookCalls = 0;
      try {
        const outcome = await idem.run('hook-fails', () => sleep(70).then(() => 'ok'), {
          onLeaseRenewed: async () => {
            hookCalls += 1;
            throw new Error('extendLease failed');
          },
        });
        expect(outcome).toMatchObject({ status: 'processed', result: 'ok' });
        await sleep(10);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      expect(hookCalls).toBeGreaterThanOrEqual(2);
      expect(unhandled).toEqual([]);
    });

    it('ctx.signal aborts when the caller aborts RunOptions.signal', async () => {
      const { idem } = setup();
      const caller = new AbortController();
      const started = deferred<AbortSignal>();
      const outcome = idem.run(
        'caller-abort',
        (ctx) => {
          started.resolve(ctx.signal);
          return new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted by caller')));
          });
        },
        { signal: caller.signal },
      );
      const signal = await started.promise;
      expect(signal.aborted).toBe(false);
      caller.abort(new Error('shutdown'));
      await expect(outcome).rejects.toThrow('aborted by caller');
      expect((signal.reason as Error).message).toBe('shutdown');
    });

    it('ctx.signal is already aborted when the caller aborted before fn started', async () => {
      const { idem } = setup();
      const caller = new AbortController();
      caller.abort();
      const outcome = await idem.run('pre-aborted', (ctx) => ctx.signal.aborted, {
        signal: caller.signal,
      });
      expect(outcome).toMatchObject({ status: 'processed', result: true });
    });

    it('fencing tokens strictly increase across takeovers', async () => {
      const { idem, clock } = setup({ heartbeat: false, leaseMs: 100 });
      const contexts: HandlerContext[] = [];
      const gates = [deferred(), deferred(), deferred(), deferred()];
      const runs = gates.map((gate) => {
        const run = idem.run('fenced', (ctx) => {
          contexts.push(ctx);
          return gate.promise;
        });
        clock.advance(101); // the lease lapses; the next run takes over
        return run;
      });
      for (const gate of gates) gate.resolve();
      const outcomes = await Promise.all(runs);
      expect(contexts.map((c) => c.attempt)).toEqual([1, 2, 3, 4]);
      const tokens = contexts.map((c) => c.fencingToken);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
      expect(outcomes.map((o) => o.status)).toEqual([
        'lease-lost',
        'lease-lost',
        'lease-lost',
        'processed',
      ]);
    });

    it('fencing tokens also increase across fail → retry', async () => {
      const { idem } = setup();
      const tokens: number[] = [];
      for (let i = 0; i < 3; i++) {
        await idem
          .run('fenced-fail', (ctx) => {
            tokens.push(ctx.fencingToken);
            throw new Error('again');
          })
          .catch(() => undefined);
      }
      const last = await idem.run('fenced-fail', (ctx) => ctx.fencingToken);
      tokens.push((last as { result: number }).result);
      expect(tokens).toHaveLength(4);
      expect([...tokens].sort((a, b) => a - b)).toEqual(tokens);
      expect(new Set(tokens).size).toBe(4);
    });
  });

  describe('store outage', () => {
    it('fails closed by default: StoreUnavailableError and fn never runs', async () => {
      const store = faultyStore(memoryStore());
      const { idem } = setup({ store });
      store.setDown(true);
      let calls = 0;
      const error = await idem.run('down', () => calls++).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE, retriable: true });
      expect(calls).toBe(0);
      expect(store.refused).toBe(1);
      store.setDown(false);
      await expect(idem.run('down', () => 'later')).resolves.toMatchObject({
        status: 'processed',
        attempt: 1,
      });
    });

    it('onStoreError "process" runs fn unclaimed (fencingToken 0)', async () => {
      const store = faultyStore(memoryStore());
      const warnings: unknown[] = [];
      const logger = {
        debug() {},
        info() {},
        warn: (obj: object, msg?: string) => void warnings.push([obj, msg]),
        error() {},
      };
      const { idem } = setup({ store, onStoreError: 'process', logger });
      expect(warnings).toHaveLength(1); // the fail-open choice is announced at creation
      store.setDown(true);
      let calls = 0;
      const outcome = await idem.run('open', () => {
        calls += 1;
        return 'ran anyway';
      });
      expect(outcome).toEqual({
        status: 'processed',
        result: 'ran anyway',
        attempt: 1,
        fencingToken: 0,
      });
      expect(calls).toBe(1);
      expect(warnings).toHaveLength(2);
    });

    it('a record the store refuses rejects run() with StoreRejectedError, fn not run, fail-open too', async () => {
      const inner = memoryStore();
      const refusal = new StoreRejectedError('WRONGTYPE under the record key', {
        affects: 'record',
      });
      const store: Store = {
        ...inner,
        claim: () => Promise.reject(refusal),
        claimMany: (r) => inner.claimMany(r),
        complete: (r) => inner.complete(r),
        fail: (r) => inner.fail(r),
        renew: (r) => inner.renew(r),
        release: (r) => inner.release(r),
        inspect: (r) => inner.inspect(r),
        close: () => inner.close(),
      };
      for (const onStoreError of ['retry', 'process'] as const) {
        const { idem } = setup({ store, onStoreError });
        let calls = 0;
        await expect(idem.run('refused', () => calls++)).rejects.toBe(refusal);
        expect(calls).toBe(0);
      }
    });
  });

  describe('results', () => {
    const unstorable: [string, () => unknown, 'too-large' | 'not-serializable'][] = [
      ['a 100 000-byte result', () => 'x'.repeat(100_000), 'too-large'],
      ['a BigInt', () => 10n, 'not-serializable'],
      [
        'a cyclic object',
        () => {
          const node: Record<string, unknown> = { name: 'n' };
          node.self = node;
          return node;
        },
        'not-serializable',
      ],
      ['a function', () => () => 1, 'not-serializable'],
      [
        'a function nested in the result',
        () => ({ id: 1, callback: () => 'lost' }),
        'not-serializable',
      ],
    ];

    it.each(unstorable)(
      'a handler that returned %s never runs again: two run() calls, one run',
      async (_name, make, reason) => {
        const { idem, store, scope } = setup({ storeResults: true });
        let calls = 0;
        const handler = () => {
          calls += 1;
          return make();
        };
        const first = await idem.run('unstorable', handler);
        expect(first).toMatchObject({ status: 'processed', attempt: 1, resultOmitted: reason });
        const second = await idem.run('unstorable', handler);
        expect(calls).toBe(1);
        expect(second).toEqual({
          status: 'duplicate',
          resultOmitted: reason,
          completedAt: expect.any(Number),
        });
        const record = await store.inspect({ scope, requestId: 'unstorable' });
        expect(record).toMatchObject({ state: 'COMPLETED', attempt: 1, resultOmitted: reason });
        expect(record?.result).toBeUndefined();
      },
    );

    it('processed hands the caller the result it could not store', async () => {
      const { idem } = setup({ storeResults: true });
      const outcome = await idem.run('bigint-kept', () => 10n);
      expect(outcome).toEqual({
        status: 'processed',
        result: 10n,
        attempt: 1,
        fencingToken: 1,
        resultOmitted: 'not-serializable',
      });
    });

    it('an omitted result is reported on idemq:result-omitted and logged, with the reason', async () => {
      const warnings: unknown[] = [];
      const logger = { ...silentLogger, warn: (fields: unknown) => warnings.push(fields) };
      const { idem, scope } = setup({ storeResults: true, logger });
      const seen: unknown[] = [];
      const listener = (message: unknown) => seen.push(message);
      diagnostics.subscribe('idemq:result-omitted', listener);
      try {
        await idem.run('omitted-event', () => 10n);
      } finally {
        diagnostics.unsubscribe('idemq:result-omitted', listener);
      }
      expect(seen).toEqual([
        {
          requestId: 'omitted-event',
          scope,
          source: undefined,
          reason: 'not-serializable',
          error: expect.any(ResultNotSerializableError),
        },
      ]);
      expect(warnings).toEqual([
        expect.objectContaining({ requestId: 'omitted-event', reason: 'not-serializable' }),
      ]);
    });

    it('a serializer that throws anything completes without the result (not-serializable)', async () => {
      const serializer = {
        serialize: () => {
          throw new TypeError('no');
        },
        deserialize: (text: string) => text,
      };
      const { idem } = setup({ storeResults: true, serializer });
      let calls = 0;
      await idem.run('custom-throws', () => (calls += 1));
      await expect(idem.run('custom-throws', () => (calls += 1))).resolves.toEqual({
        status: 'duplicate',
        resultOmitted: 'not-serializable',
        completedAt: expect.any(Number),
      });
      expect(calls).toBe(1);
    });

    it('without storeResults a BigInt result is fine (nothing is serialized)', async () => {
      const { idem } = setup();
      await expect(idem.run('bigint-ok', () => 10n)).resolves.toEqual({
        status: 'processed',
        result: 10n,
        attempt: 1,
        fencingToken: 1,
      });
    });

    it('a result over a store limit set lower completes without it (too-large)', async () => {
      const clock = manualClock();
      const store = memoryStore({ clock, maxResultBytes: 16 });
      const { idem, scope } = setup({ store, storeResults: true });
      let calls = 0;
      const big = () => {
        calls += 1;
        return 'x'.repeat(100);
      };
      await expect(idem.run('big', big)).resolves.toMatchObject({
        status: 'processed',
        resultOmitted: 'too-large',
      });
      await expect(idem.run('big', big)).resolves.toEqual({
        status: 'duplicate',
        resultOmitted: 'too-large',
        completedAt: expect.any(Number),
      });
      expect(calls).toBe(1);
      expect((await store.inspect({ scope, requestId: 'big' }))?.state).toBe('COMPLETED');
    });

    it('a stored {"__proto__": …} result replays without polluting any prototype', async () => {
      const { idem } = setup({ storeResults: true });
      const hostile = JSON.parse('{"__proto__":{"polluted":1},"ok":true}') as object;
      await idem.run('proto', () => hostile);
      const replay = await idem.run<unknown>('proto', () => null);
      expect(replay.status).toBe('duplicate');
      const result = (replay as { result: Record<string, unknown> }).result;
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      expect((result as { polluted?: unknown }).polluted).toBeUndefined();
      expect(Object.hasOwn(result, '__proto__')).toBe(true);
      expect(result.ok).toBe(true);
    });

    it('a Uint8Array result replays as an equal Uint8Array, also nested in an object', async () => {
      const { idem } = setup({ storeResults: true });
      const body = Uint8Array.of(0xde, 0xad, 0xbe, 0xef);
      await idem.run('bytes', () => body);
      const replay = await idem.run<unknown>('bytes', () => null);
      expect(replay).toMatchObject({ status: 'duplicate', result: body });
      expect((replay as { result: unknown }).result).toBeInstanceOf(Uint8Array);
      const response = { status: 201, body: Buffer.from('{"id":"ch_1"}') };
      await idem.run('response', () => response);
      const again = (await idem.run<unknown>('response', () => null)) as {
        result: { status: number; body: Uint8Array };
      };
      expect(again.result.status).toBe(201);
      expect(again.result.body).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(again.result.body).toString()).toBe('{"id":"ch_1"}');
    });

    it('the result limit counts bytes as stored (base64), not as returned', async () => {
      const clock = manualClock();
      const store = memoryStore({ clock, maxResultBytes: 100 });
      const { idem } = setup({ store, storeResults: true });
      // 72 bytes are 96 in base64, with the format's 8 more: over 100 though 72 < 100.
      await idem.run('bytes-72', () => new Uint8Array(72));
      await expect(idem.run('bytes-72', () => null)).resolves.toMatchObject({
        status: 'duplicate',
        resultOmitted: 'too-large',
      });
      // 66 bytes are 88 in base64, 96 stored: fits.
      await idem.run('bytes-66', () => new Uint8Array(66).fill(7));
      await expect(idem.run('bytes-66', () => null)).resolves.toMatchObject({
        status: 'duplicate',
        result: new Uint8Array(66).fill(7),
      });
    });

    it('uses a custom serializer both ways', async () => {
      const serializer = {
        serialize: (value: unknown) => `v1:${JSON.stringify(value)}`,
        deserialize: (text: string) => ({ revived: JSON.parse(text.slice(3)) }),
      };
      const { idem, store, scope } = setup({ storeResults: true, serializer });
      await idem.run('custom', () => [1, 2]);
      expect((await store.inspect({ scope, requestId: 'custom' }))?.result).toBe('v1:[1,2]');
      await expect(idem.run('custom', () => null)).resolves.toEqual({
        status: 'duplicate',
        result: { revived: [1, 2] },
        completedAt: expect.any(Number),
      });
    });
  });

  describe('validation', () => {
    it('reports every bad option in one InvalidOptionsError', () => {
      let error: unknown;
      try {
        createIdempotency({
          store: {} as Store,
          scope: '',
          leaseMs: 5,
        });
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const { problems, code } = error as InvalidOptionsError;
      expect(code).toBe(ErrorCodes.OPTIONS_INVALID);
      expect(problems).toHaveLength(3);
      expect(problems.some((p) => p.startsWith('store '))).toBe(true);
      expect(problems.some((p) => p.startsWith('scope '))).toBe(true);
      expect(problems.some((p) => p.startsWith('leaseMs ') && p.includes('got 5'))).toBe(true);
    });

    it.each([
      ['undefined', undefined],
      ['null', null],
    ])('options that are %s give an InvalidOptionsError, not a TypeError', (_n, options) => {
      expect(() => createIdempotency(options as unknown as IdempotencyOptions)).toThrow(
        InvalidOptionsError,
      );
    });

    it('rejects wrongly typed flags instead of ignoring them', () => {
      expect(() =>
        createIdempotency({
          store: memoryStore(),
          scope: 's',
          heartbeat: 'yes' as unknown as boolean,
          onStoreError: 'ignore' as 'retry',
          storeResults: 1 as unknown as boolean,
          maxRequestIdBytes: 0,
        }),
      ).toThrow(
        expect.objectContaining({
          problems: [
            expect.stringMatching(/^heartbeat/),
            expect.stringMatching(/^onStoreError/),
            expect.stringMatching(/^storeResults/),
            expect.stringMatching(/^maxRequestIdBytes/),
          ],
        }),
      );
    });

    it.each([
      ['missing', undefined, ErrorCodes.REQUEST_ID_MISSING],
      ['null', null, ErrorCodes.REQUEST_ID_MISSING],
      ['empty', '', ErrorCodes.REQUEST_ID_MISSING],
      ['whitespace', ' \t\n ', ErrorCodes.REQUEST_ID_MISSING],
      ['513 bytes', 'a'.repeat(513), ErrorCodes.REQUEST_ID_TOO_LONG],
      ['257 two-byte chars (514 bytes)', 'é'.repeat(257), ErrorCodes.REQUEST_ID_TOO_LONG],
      ['a lone surrogate', 'abc\uDC00', ErrorCodes.REQUEST_ID_INVALID],
      ['a CR LF (header splitting)', 'key\r\nx', ErrorCodes.REQUEST_ID_INVALID],
      ['a NUL', 'key\u0000', ErrorCodes.REQUEST_ID_INVALID],
      ['a DEL', 'key\u007f', ErrorCodes.REQUEST_ID_INVALID],
      ['a C1 control', 'key\u0085', ErrorCodes.REQUEST_ID_INVALID],
      ['129 four-byte chars (516 bytes)', '💶'.repeat(129), ErrorCodes.REQUEST_ID_TOO_LONG],
      ['a number', 42, ErrorCodes.REQUEST_ID_INVALID],
    ])('rejects a requestId that is %s with the right code, fn not run', async (_n, id, code) => {
      const { idem, store } = setup();
      let calls = 0;
      const error = await idem.run(id as string, () => calls++).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidRequestIdError);
      expect(error).toMatchObject({ code, retriable: false });
      expect(calls).toBe(0);
      void store;
    });

    it.each([
      [undefined, 'got undefined'],
      [null, 'got null'],
      ['', 'got ""'],
      ['  ', 'got "  "'],
    ])(
      'a missing key (%j) is worded for a route author, not as a message without requestId',
      async (id, got) => {
        const { idem } = setup();
        const error = await idem.run(id as string, () => 1).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidRequestIdError);
        expect(error).toMatchObject({ code: ErrorCodes.REQUEST_ID_MISSING });
        expect((error as Error).message).toBe(`run() needs an idempotency key (requestId); ${got}`);
      },
    );

    it('accepts a requestId of exactly 512 bytes and honours maxRequestIdBytes', async () => {
      const { idem } = setup();
      await expect(idem.run('a'.repeat(512), () => 1)).resolves.toMatchObject({
        status: 'processed',
      });
      const { idem: small } = setup({ maxRequestIdBytes: 8 });
      await expect(small.run('123456789', () => 1)).rejects.toMatchObject({
        code: ErrorCodes.REQUEST_ID_TOO_LONG,
      });
    });
  });
});
