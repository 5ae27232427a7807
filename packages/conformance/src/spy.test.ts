import { type HandlerContext, memoryBroker, memoryTransport } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { HandlerSpy } from './spy.js';

describe('HandlerSpy', () => {
  it('resolves waits for records seen before and after the wait began', async () => {
    const spy = new HandlerSpy({ timeoutMs: 500 });
    spy.add('duplicate', 'a', { requestId: 'a', source: 'q' });
    await expect(spy.waitFor('a', 'duplicate')).resolves.toMatchObject({ requestId: 'a' });
    const second = spy.waitFor('a', 'duplicate', { count: 2 });
    spy.add('duplicate', 'b', { requestId: 'b', source: 'q' });
    spy.add('duplicate', 'a', { requestId: 'a', source: 'q' });
    const record = await second;
    expect(record.seq).toBe(3);
    expect(spy.count('duplicate')).toBe(3);
    expect(spy.count('duplicate', 'a')).toBe(2);
  });

  it('times out with what it saw for the id', async () => {
    const spy = new HandlerSpy({ timeoutMs: 20 });
    spy.add('duplicate', 'a', { requestId: 'a', source: 'q' });
    await expect(spy.waitFor('a', 'processed')).rejects.toThrow(
      /timed out after 20 ms waiting for 1 × 'processed' of a \(got 0\)\. Seen for this id: duplicate/,
    );
  });

  it('rejects pending waits on dispose', async () => {
    const spy = new HandlerSpy({ timeoutMs: 5_000 });
    const pending = spy.waitFor('a', 'processed');
    spy.dispose();
    await expect(pending).rejects.toThrow('disposed');
  });

  it('tracks deliveries and what each settlement verb resolved, without settling anything', async () => {
    const transport = memoryTransport({ broker: memoryBroker() });
    const spy = new HandlerSpy({ timeoutMs: 1_000 });
    await transport.subscribe({ source: 'q', maxInFlight: 1, onDelivery: spy.onDelivery() });
    await transport.publish('q', { requestId: 'r1', body: 'x' });
    const { data } = await spy.waitFor('r1', 'delivered');
    expect(data.nth).toBe(1);
    expect(data.delivery.settled).toBe(false);
    expect(await data.delivery.ack()).toBe(true);
    expect(data.delivery.settled).toBe(true);
    expect(await data.delivery.ack()).toBe(false);
    expect(spy.all('acked', 'r1').map((r) => r.data.ok)).toEqual([true, false]);
    await transport.close();
  });

  it('records a reaction that throws as an error', async () => {
    const transport = memoryTransport({ broker: memoryBroker() });
    const spy = new HandlerSpy({ timeoutMs: 1_000 });
    const onDelivery = spy.onDelivery(() => {
      throw new Error('406 PRECONDITION_FAILED');
    });
    await transport.subscribe({ source: 'q', maxInFlight: 1, onDelivery });
    await transport.publish('q', { requestId: 'r1', body: 'x' });
    const { data } = await spy.waitFor('r1', 'error');
    expect(data.error.message).toBe('406 PRECONDITION_FAILED');
    await transport.close();
  });

  it('counts concurrent handler runs', async () => {
    const spy = new HandlerSpy();
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handler = spy.wrapHandler(() => blocked);
    const ctx: HandlerContext = {
      requestId: 'r',
      attempt: 1,
      fencingToken: 1,
      signal: new AbortController().signal,
      leaseRemainingMs: () => 1_000,
    };
    const message = {
      requestId: 'r',
      value: undefined,
      body: new Uint8Array(),
      headers: {},
      source: 'q',
      deliveryAttempt: 1,
      redelivered: false,
      raw: undefined,
    };
    const runs = [handler(message, ctx), handler(message, ctx)];
    expect(spy.running).toBe(2);
    release();
    await Promise.all(runs);
    expect(spy.running).toBe(0);
    expect(spy.maxRunning).toBe(2);
    expect(spy.count('handler-finished', 'r')).toBe(2);
  });
});
