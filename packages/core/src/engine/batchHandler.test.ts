import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { InvalidOptionsError, NonRetriableError } from '../errors/index.js';
import type { ConsumerEventName, ConsumerEvents } from '../observability/events.js';
import { memoryStore } from '../store/memoryStore.js';
import { memoryTransport } from '../transport/memoryTransport.js';
import { createConsumer } from './createConsumer.js';
import type { BatchContext, BatchHandler, BatchItem, ConsumerOptions } from './types.js';

let counter = 0;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Call {
  ids: string[];
  items: readonly BatchItem<unknown>[];
  ctx: BatchContext;
}

/** A batch consumer on its own queue; messages published before `start` come as one batch. */
function batchHarness(
  batchHandler: BatchHandler<unknown, unknown>,
  options: Partial<
    Pick<ConsumerOptions<unknown, unknown>, 'concurrency' | 'retry' | 'decode'>
  > = {},
) {
  const id = ++counter;
  const transport = memoryTransport();
  const store = memoryStore();
  const source = `batch-${id}`;
  const scope = `scope-${id}`;
  const calls: Call[] = [];
  const consumer = createConsumer({
    transport,
    store,
    source,
    scope,
    concurrency: 16,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, jitter: 'none' },
    ...options,
    batchHandler: (items, ctx) => {
      calls.push({ ids: items.map((item) => item.message.requestId), items, ctx });
      return batchHandler(items, ctx);
    },
  });
  cleanups.push(() => transport.close());
  cleanups.push(() => consumer.stop({ timeoutMs: 50 }));
  const events: { name: ConsumerEventName; payload: { requestId?: string; code?: string } }[] = [];
  for (const name of ['processed', 'duplicate', 'retry', 'dead-letter', 'error'] as const) {
    consumer.on(name, (payload: ConsumerEvents[typeof name]) =>
      events.push({ name, payload: payload as { requestId?: string; code?: string } }),
    );
  }
  const named = (name: ConsumerEventName) => events.filter((e) => e.name === name);
  async function until(predicate: () => boolean, what: string) {
    const deadline = Date.now() + 3_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  const publish = (requestId: string, body: unknown = { n: requestId }) =>
    transport.publish(source, { requestId, body });
  const idle = () => {
    const stats = transport.stats(source);
    return stats.ready === 0 && stats.inFlight === 0 && stats.delayed === 0;
  };
  return { consumer, transport, store, source, scope, calls, events, named, until, publish, idle };
}

describe('createConsumer with a batchHandler', () => {
  it('gets the messages handed out together in one call, each item with its own record context', async () => {
    const h = batchHarness(async () => undefined);
    for (const id of ['a', 'b', 'c', 'd', 'e']) await h.publish(id);
    await h.consumer.start();
    await h.until(() => h.named('processed').length === 5, '5 processed');
    expect(h.calls).toHaveLength(1);
    expect([...(h.calls[0]?.ids ?? [])].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const { message, ctx } of h.calls[0]?.items ?? []) {
      expect(ctx.requestId).toBe(message.requestId);
      expect(message.value).toEqual({ n: message.requestId });
      expect(ctx.attempt).toBe(1);
      expect(ctx.fencingToken).toBeGreaterThan(0);
    }
    expect(h.calls[0]?.ctx.leaseRemainingMs()).toBeGreaterThan(0);
    await h.until(h.idle, 'every message acked');
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      expect((await h.store.inspect({ scope: h.scope, requestId: id }))?.state).toBe('COMPLETED');
    }
  });

  it('never sees duplicates or malformed messages: those are settled without it', async () => {
    const h = batchHarness(async () => undefined, {
      decode: (body) => {
        const text = new TextDecoder().decode(body);
        if (text.includes('bad')) throw new Error('unreadable');
        return JSON.parse(text);
      },
    });
    await h.consumer.start();
    await h.publish('done-before');
    await h.until(() => h.named('processed').length === 1, 'the first processed');
    await h.consumer.stop();
    await h.publish('done-before');
    await h.publish('fresh');
    await h.publish('malformed', 'bad');
    await h.consumer.start();
    await h.until(() => h.named('processed').length === 2, 'the fresh one processed');
    await h.until(() => h.named('duplicate').length === 1, 'the duplicate settled');
    await h.until(() => h.named('dead-letter').length === 1, 'the malformed one dead-lettered');
    expect(h.calls.map((call) => call.ids)).toEqual([['done-before'], ['fresh']]);
  });

  it('completes, retries and dead-letters each item by its own settled result', async () => {
    let round = 0;
    const h = batchHarness(async (items) => {
      round += 1;
      return items.map(({ message }) => {
        if (message.requestId === 'flaky' && round === 1) {
          return { status: 'rejected', reason: new Error('try again') } as const;
        }
        if (message.requestId === 'poison') {
          return { status: 'rejected', reason: new NonRetriableError('never') } as const;
        }
        return { status: 'fulfilled', value: `done ${message.requestId}` } as const;
      });
    });
    for (const id of ['ok', 'flaky', 'poison']) await h.publish(id);
    await h.consumer.start();
    await h.until(() => h.named('processed').length === 2, 'ok and flaky processed');
    await h.until(() => h.named('dead-letter').length === 1, 'poison dead-lettered');
    await h.until(h.idle, 'every message settled');
    expect(h.named('retry').map((e) => e.payload.requestId)).toEqual(['flaky']);
    expect(h.named('dead-letter')[0]?.payload).toMatchObject({
      requestId: 'poison',
      code: ErrorCodes.HANDLER_NON_RETRIABLE,
    });
    const runsOf = (id: string) => h.calls.filter((call) => call.ids.includes(id)).length;
    expect([runsOf('ok'), runsOf('flaky'), runsOf('poison')]).toEqual([1, 2, 1]);
  });

  it('a throwing batch handler fails every item of its call', async () => {
    let calls = 0;
    const h = batchHarness(async () => {
      calls += 1;
      if (calls === 1) throw new Error('bulk insert failed');
    });
    for (const id of ['x', 'y']) await h.publish(id);
    await h.consumer.start();
    await h.until(() => h.named('processed').length === 2, 'both processed after the retry');
    expect(
      h
        .named('retry')
        .map((e) => e.payload.requestId)
        .sort(),
    ).toEqual(['x', 'y']);
  });

  it('results that are not one settled result per item dead-letter the call with a typed code', async () => {
    const wrong: unknown[] = [[], [{ status: 'fulfilled' }, 'nonsense'], 'all good'];
    for (const results of wrong) {
      const h = batchHarness(async () => results as never);
      for (const id of ['p', 'q']) await h.publish(id);
      await h.consumer.start();
      await h.until(() => h.named('dead-letter').length >= 1, 'a dead letter');
      await h.until(h.idle, 'every message settled');
      const codes = h.named('dead-letter').map((e) => [e.payload.requestId, e.payload.code]);
      if (Array.isArray(results) && results.length === 2) {
        // The well-formed item completes; only the malformed one is refused.
        expect(codes).toEqual([['q', ErrorCodes.BATCH_RESULTS_INVALID]]);
        expect(h.named('processed').map((e) => e.payload.requestId)).toEqual(['p']);
      } else {
        expect(codes.sort()).toEqual([
          ['p', ErrorCodes.BATCH_RESULTS_INVALID],
          ['q', ErrorCodes.BATCH_RESULTS_INVALID],
        ]);
      }
    }
  });

  it('stop() aborts the call signal and gives its messages back unsettled', async () => {
    let seen: BatchContext | undefined;
    const h = batchHarness(
      (_items, ctx) =>
        new Promise((_, reject) => {
          seen = ctx;
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        }),
    );
    for (const id of ['s1', 's2']) await h.publish(id);
    await h.consumer.start();
    await h.until(() => seen !== undefined, 'the call');
    const report = await h.consumer.stop({ timeoutMs: 20 });
    expect(report).toEqual({ drained: false, abandoned: 2 });
    expect(seen?.signal.aborted).toBe(true);
    expect(h.named('retry')).toEqual([]);
    expect(h.named('dead-letter')).toEqual([]);
    const stats = h.transport.stats(h.source);
    expect(stats.ready + stats.delayed).toBe(2);
  });

  it('needs exactly one of handler and batchHandler', () => {
    const base = { transport: memoryTransport(), store: memoryStore(), scope: 's', source: 'q' };
    const problemsOf = (options: object) => {
      try {
        createConsumer(options as ConsumerOptions<unknown, unknown>);
        return [];
      } catch (thrown) {
        expect(thrown).toBeInstanceOf(InvalidOptionsError);
        return (thrown as InvalidOptionsError).problems;
      }
    };
    expect(problemsOf({ ...base })).toEqual(['handler must be a function, got undefined']);
    expect(problemsOf({ ...base, handler: () => 1, batchHandler: () => undefined })).toEqual([
      'give either handler or batchHandler, not both',
    ]);
    expect(problemsOf({ ...base, batchHandler: 'no' })).toEqual([
      'batchHandler must be a function, got "no"',
    ]);
    expect(problemsOf({ ...base, batchHandler: () => undefined })).toEqual([]);
  });
});
