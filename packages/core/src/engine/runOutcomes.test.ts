import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors/index.js';
import { memoryStore } from '../store/memoryStore.js';
import { faultyStore, manualClock } from '../testing/index.js';
import { createIdempotency } from './createIdempotency.js';
import type { IdempotencyOptions } from './types.js';

/** A promise the test resolves by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

function setup(options: Partial<IdempotencyOptions> = {}) {
  const clock = manualClock();
  const store = options.store ?? memoryStore({ clock });
  const idem = createIdempotency({ store, scope: 'fixed', ...options });
  return { idem, store, clock };
}

/** What fn throws when the caller's signal aborted it, as fetch and most clients do. */
function abortable(started: (signal: AbortSignal) => void) {
  return (ctx: { signal: AbortSignal }) =>
    new Promise<never>((_, reject) => {
      started(ctx.signal);
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
    });
}

describe('run() outcomes a request/response front relies on', () => {
  describe('duplicate carries completedAt', () => {
    it('is the store time of the completion, not of the duplicate', async () => {
      const { idem, clock } = setup({ storeResults: true });
      const completedAt = clock.now();
      await idem.run('done', () => 'first');
      clock.advance(7_000);
      await expect(idem.run('done', () => 'second')).resolves.toEqual({
        status: 'duplicate',
        result: 'first',
        completedAt,
      });
    });

    it('also without storeResults and beside resultOmitted', async () => {
      const { idem, clock } = setup();
      const at = clock.now();
      await idem.run('plain', () => 1);
      clock.advance(10);
      await expect(idem.run('plain', () => 2)).resolves.toEqual({
        status: 'duplicate',
        completedAt: at,
      });
      const { idem: storing, clock: clock2 } = setup({ storeResults: true });
      const at2 = clock2.now();
      await storing.run('omitted', () => 10n);
      clock2.advance(10);
      await expect(storing.run('omitted', () => 1n)).resolves.toEqual({
        status: 'duplicate',
        resultOmitted: 'not-serializable',
        completedAt: at2,
      });
    });
  });

  describe('lease-lost carries the result fn produced', () => {
    it('an undefined result is still reported as produced; a throw reports none', async () => {
      const { idem, clock } = setup({ heartbeat: false, leaseMs: 1_000 });
      const gates = [deferred(), deferred()];
      const returned = idem.run('lost-undefined', () => gates[0]?.promise);
      const threw = idem.run('lost-throw', async () => {
        await gates[1]?.promise;
        throw new Error('late');
      });
      clock.advance(1_001);
      await idem.run('lost-undefined', () => 'owner');
      const owner = deferred();
      const owning = idem.run('lost-throw', () => owner.promise);
      for (const gate of gates) gate.resolve();
      const lostReturned = await returned;
      expect(lostReturned).toEqual({ status: 'lease-lost', attempt: 1, result: undefined });
      expect('result' in lostReturned).toBe(true);
      const lostThrew = await threw;
      expect(lostThrew).toEqual({ status: 'lease-lost', attempt: 1 });
      expect('result' in lostThrew).toBe(false);
      owner.resolve();
      await owning;
    });
  });

  describe("the caller's abort (RunOptions.signal, onAbort)", () => {
    it("today's default is release: run() rejects with fn's error, no attempt counted, the retry is the same attempt", async () => {
      const { idem, store } = setup();
      const caller = new AbortController();
      const started = deferred<AbortSignal>();
      const outcome = idem.run('gone', abortable(started.resolve), { signal: caller.signal });
      await started.promise;
      const reason = new DOMException('client disconnected', 'AbortError');
      caller.abort(reason);
      await expect(outcome).rejects.toBe(reason);
      const record = await store.inspect({ scope: 'fixed', requestId: 'gone' });
      expect(record).toMatchObject({ state: 'RELEASED', attempt: 1 });
      expect(record?.lastError).toBeUndefined();
      const retry = await idem.run('gone', (ctx) => ({
        attempt: ctx.attempt,
        previous: ctx.previousError,
      }));
      expect(retry).toMatchObject({
        status: 'processed',
        attempt: 1,
        result: { attempt: 1, previous: undefined },
      });
    });

    it("onAbort: 'fail' records the failure and counts the attempt", async () => {
      const { idem, store } = setup();
      const caller = new AbortController();
      const started = deferred<AbortSignal>();
      const outcome = idem.run('gone-fail', abortable(started.resolve), {
        signal: caller.signal,
        onAbort: 'fail',
      });
      await started.promise;
      caller.abort(new Error('client disconnected'));
      await expect(outcome).rejects.toThrow('client disconnected');
      expect(await store.inspect({ scope: 'fixed', requestId: 'gone-fail' })).toMatchObject({
        state: 'FAILED',
        attempt: 1,
        lastError: { message: 'client disconnected' },
      });
      await expect(idem.run('gone-fail', (ctx) => ctx.attempt)).resolves.toMatchObject({
        result: 2,
        attempt: 2,
      });
    });

    it('fn that finishes despite the abort is recorded as processed: its outcome stands', async () => {
      const { idem, store } = setup({ storeResults: true });
      const caller = new AbortController();
      const outcome = await idem.run(
        'finished',
        (ctx) => {
          caller.abort();
          return ctx.signal.aborted ? 'charged anyway' : 'not aborted';
        },
        { signal: caller.signal },
      );
      expect(outcome).toMatchObject({ status: 'processed', result: 'charged anyway' });
      expect(await store.inspect({ scope: 'fixed', requestId: 'finished' })).toMatchObject({
        state: 'COMPLETED',
      });
    });

    it('a failure while the signal is not aborted is recorded as before', async () => {
      const { idem, store } = setup();
      const caller = new AbortController();
      await expect(
        idem.run(
          'plain-failure',
          () => {
            throw new Error('declined');
          },
          { signal: caller.signal },
        ),
      ).rejects.toThrow('declined');
      expect(await store.inspect({ scope: 'fixed', requestId: 'plain-failure' })).toMatchObject({
        state: 'FAILED',
        attempt: 1,
      });
    });

    it("a release the store cannot take still rejects with fn's error; the lease lapses", async () => {
      const store = faultyStore(memoryStore());
      const { idem } = setup({ store });
      const caller = new AbortController();
      const started = deferred<AbortSignal>();
      const outcome = idem.run('gone-down', abortable(started.resolve), { signal: caller.signal });
      await started.promise;
      store.setDown(true);
      caller.abort(new Error('client disconnected'));
      await expect(outcome).rejects.toThrow('client disconnected');
      store.setDown(false);
      expect((await store.inspect({ scope: 'fixed', requestId: 'gone-down' }))?.state).toBe(
        'IN_PROGRESS',
      );
    });

    it('an unknown onAbort is refused before anything runs', async () => {
      const { idem } = setup();
      let calls = 0;
      await expect(
        idem.run('bad-abort', () => calls++, { onAbort: 'ignore' as 'fail' }),
      ).rejects.toBeInstanceOf(InvalidOptionsError);
      expect(calls).toBe(0);
    });
  });

  describe('per-call scope', () => {
    it("two scopes of one engine never see each other's records", async () => {
      const { idem, store } = setup({ storeResults: true });
      const a = await idem.run('order-1', () => 'tenant a', { scope: 'tenant-a', payload: 'A' });
      const b = await idem.run('order-1', () => 'tenant b', { scope: 'tenant-b', payload: 'B' });
      expect(a).toMatchObject({ status: 'processed', result: 'tenant a' });
      // Another payload under the same key is no key-reuse across scopes: another namespace.
      expect(b).toMatchObject({ status: 'processed', result: 'tenant b' });
      await expect(
        idem.run('order-1', () => 'again', { scope: 'tenant-a', payload: 'A' }),
      ).resolves.toMatchObject({ status: 'duplicate', result: 'tenant a' });
      await expect(
        idem.run('order-1', () => 'again', { scope: 'tenant-b', payload: 'B' }),
      ).resolves.toMatchObject({ status: 'duplicate', result: 'tenant b' });
      // The engine's own scope has no record of it.
      expect(await store.inspect({ scope: 'fixed', requestId: 'order-1' })).toBeUndefined();
      await expect(idem.run('order-1', () => 'fixed')).resolves.toMatchObject({
        status: 'processed',
        result: 'fixed',
      });
    });

    it('an in-progress record of one scope does not hold up another', async () => {
      const { idem } = setup();
      const gate = deferred();
      const first = idem.run('busy', () => gate.promise, { scope: 'tenant-a' });
      await expect(idem.run('busy', () => 'b', { scope: 'tenant-b' })).resolves.toMatchObject({
        status: 'processed',
      });
      await expect(idem.run('busy', () => 'a2', { scope: 'tenant-a' })).resolves.toMatchObject({
        status: 'in-progress',
      });
      gate.resolve();
      await first;
    });

    it.each([
      ['empty', ''],
      ['a number', 42],
      ['null', null],
    ])('a scope that is %s is refused like the fixed one, fn not run', async (_n, scope) => {
      const { idem } = setup();
      let calls = 0;
      const error = await idem
        .run('scoped', () => calls++, { scope: scope as string })
        .catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).problems).toEqual([
        expect.stringMatching(/^scope must be a non-empty string/),
      ]);
      expect(calls).toBe(0);
    });
  });

  describe('a retry with another payload after a failure', () => {
    it('is key-reuse: the key names one request, failed or not; the same payload runs again', async () => {
      const { idem, store } = setup();
      await expect(
        idem.run(
          'pay-9',
          () => {
            throw new Error('upstream 503');
          },
          { payload: { amount: 10 } },
        ),
      ).rejects.toThrow('upstream 503');
      expect((await store.inspect({ scope: 'fixed', requestId: 'pay-9' }))?.state).toBe('FAILED');
      let calls = 0;
      await expect(idem.run('pay-9', () => calls++, { payload: { amount: 99 } })).resolves.toEqual({
        status: 'key-reuse',
      });
      expect(calls).toBe(0);
      await expect(
        idem.run('pay-9', (ctx) => ctx.attempt, { payload: { amount: 10 } }),
      ).resolves.toMatchObject({ status: 'processed', result: 2, attempt: 2 });
    });
  });
});
