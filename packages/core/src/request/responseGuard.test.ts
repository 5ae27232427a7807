import { describe, expect, it } from 'vitest';
import { memoryStore } from '../store/memoryStore.js';
import { faultyStore } from '../testing/faultyStore.js';
import {
  createResponseGuard,
  type GuardedRequest,
  type ProducedResponse,
  type Refusal,
  type ResponseFront,
  STORE_DOWN_RETRY_AFTER_MS,
} from './responseGuard.js';
import type { StoredResponse } from './storedResponse.js';

type Answer =
  | { kind: 'answer'; text: string }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'replay'; stored: StoredResponse | undefined };

const front: ResponseFront<Answer> = {
  refuse: (refusal) => ({ kind: 'refused', refusal }),
  replay: (stored) => ({ kind: 'replay', stored }),
};

const stored = (text: string, status = 200): StoredResponse => ({
  status,
  headers: [['content-type', 'text/plain']],
  body: new TextEncoder().encode(text),
});

const answered = (text: string, status = 200, storable = true): ProducedResponse<Answer> => ({
  stored: stored(text, status),
  answer: { kind: 'answer', text },
  storable,
});

function request(
  key: string,
  produce: GuardedRequest<Answer>['produce'],
  payload: string | Uint8Array = 'body',
): GuardedRequest<Answer> {
  return { key, scope: 'test:route', payload, produce };
}

describe('createResponseGuard', () => {
  it('runs the handler once per key and replays its stored response to every retry', async () => {
    const guard = createResponseGuard({ store: memoryStore(), scope: 'guard' });
    let runs = 0;
    const produce = async () => answered(`run ${++runs}`);
    expect(await guard(request('k1', produce), front)).toEqual({ kind: 'answer', text: 'run 1' });
    const replay = await guard(request('k1', produce), front);
    expect(replay).toMatchObject({ kind: 'replay', stored: { status: 200 } });
    expect(new TextDecoder().decode((replay as { stored: StoredResponse }).stored.body)).toBe(
      'run 1',
    );
    expect(runs).toBe(1);
  });

  it('refuses another payload under one key as key-reuse, and a running key as in-progress with the lease left', async () => {
    const guard = createResponseGuard({ store: memoryStore(), scope: 'guard', leaseMs: 3_000 });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = guard(
      request('k2', async () => {
        await held;
        return answered('slow');
      }),
      front,
    );
    const busy = await guard(
      request('k2', async () => answered('never')),
      front,
    );
    expect(busy).toMatchObject({ kind: 'refused', refusal: { kind: 'in-progress' } });
    const delay = (busy as { refusal: Refusal }).refusal.retryAfterMs ?? 0;
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(3_000);
    release();
    expect(await first).toEqual({ kind: 'answer', text: 'slow' });
    const reused = await guard(
      request('k2', async () => answered('never'), 'other'),
      front,
    );
    expect(reused).toMatchObject({ kind: 'refused', refusal: { kind: 'key-reuse' } });
  });

  it('gives an unstorable response to its client and leaves the record for the retry to run again', async () => {
    const guard = createResponseGuard({ store: memoryStore(), scope: 'guard' });
    const attempts: number[] = [];
    const produce: GuardedRequest<Answer>['produce'] = async (ctx) => {
      attempts.push(ctx.attempt);
      return ctx.attempt === 1 ? answered('busy', 503, false) : answered('ok');
    };
    expect(await guard(request('k3', produce), front)).toEqual({ kind: 'answer', text: 'busy' });
    expect(await guard(request('k3', produce), front)).toEqual({ kind: 'answer', text: 'ok' });
    expect(attempts).toEqual([1, 2]);
  });

  it('answers handler-failed when the handler throws, and the retry runs it again', async () => {
    const guard = createResponseGuard({ store: memoryStore(), scope: 'guard' });
    let runs = 0;
    const produce = async () => {
      runs += 1;
      if (runs === 1) throw new Error('boom');
      return answered('second');
    };
    expect(await guard(request('k4', produce), front)).toMatchObject({
      kind: 'refused',
      refusal: { kind: 'handler-failed' },
    });
    expect(await guard(request('k4', produce), front)).toEqual({ kind: 'answer', text: 'second' });
  });

  it('refuses with store-unavailable and a retry hint when the store is down, or runs unguarded with onStoreError: process', async () => {
    const down = faultyStore(memoryStore());
    down.setDown(true);
    let runs = 0;
    const produce = async () => answered(`run ${++runs}`);
    const failing = createResponseGuard({ store: down, scope: 'guard' });
    expect(await failing(request('k5', produce), front)).toEqual({
      kind: 'refused',
      refusal: expect.objectContaining({
        kind: 'store-unavailable',
        retryAfterMs: STORE_DOWN_RETRY_AFTER_MS,
      }),
    });
    expect(runs).toBe(0);
    const open = createResponseGuard({ store: down, scope: 'guard', onStoreError: 'process' });
    expect(await open(request('k5', produce), front)).toEqual({ kind: 'answer', text: 'run 1' });
  });

  it('refuses a key core cannot take as key-malformed', async () => {
    const guard = createResponseGuard({ store: memoryStore(), scope: 'guard' });
    const answer = await guard(
      request('x'.repeat(600), async () => answered('never')),
      front,
    );
    expect(answer).toMatchObject({ kind: 'refused', refusal: { kind: 'key-malformed' } });
  });
});
