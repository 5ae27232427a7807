import { describe, expect, it } from 'vitest';
import { EventHub } from '../observability/events.js';
import type { Delivery, IncomingMessage } from '../transport/transport.js';
import type { Abandonment } from './abandonment.js';
import { DeliverySettler } from './deliverySettler.js';
import { Dispatcher, type ProcessDelivery } from './dispatch.js';

/** A delivery that records the verbs called on it. */
function fakeDelivery(name: string) {
  const verbs: string[] = [];
  const settle = (verb: string) => async () => {
    verbs.push(verb);
    return true;
  };
  const delivery: Delivery = {
    message: { requestId: name } as unknown as IncomingMessage,
    settled: false,
    ack: settle('ack'),
    retry: settle('retry'),
    reject: settle('reject'),
    release: settle('release'),
    extendLease: async () => true,
  };
  return { delivery, verbs };
}

/** A process step whose runs the test finishes by hand. */
function manualProcess() {
  const running = new Map<string, { finish: () => void; abandon: Abandonment }>();
  const started: string[] = [];
  const process: ProcessDelivery = (delivery, abandon) =>
    new Promise<void>((resolve) => {
      const name = delivery.message.requestId as unknown as string;
      started.push(name);
      running.set(name, { finish: resolve, abandon });
    });
  return { process, running, started };
}

function dispatcher(concurrency: number, process: ProcessDelivery) {
  const events = new EventHub();
  const errors: Error[] = [];
  events.on('error', ({ error }) => errors.push(error));
  const settler = new DeliverySettler(events, 'src');
  const dispatch = new Dispatcher({ concurrency, process, settler, events, source: 'src' });
  dispatch.accepting = true;
  return { dispatch, errors };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Dispatcher', () => {
  it('runs at most `concurrency` deliveries; the rest wait and start as slots free, in order', async () => {
    const { process, running, started } = manualProcess();
    const { dispatch } = dispatcher(2, process);
    for (const name of ['a', 'b', 'c', 'd']) dispatch.offer(fakeDelivery(name).delivery);
    expect(started).toEqual(['a', 'b']);
    running.get('a')?.finish();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    running.get('b')?.finish();
    await tick();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('while not accepting, gives a delivery back untouched instead of starting it', async () => {
    const { process, started } = manualProcess();
    const { dispatch } = dispatcher(2, process);
    dispatch.accepting = false;
    const { delivery, verbs } = fakeDelivery('late');
    dispatch.offer(delivery);
    await tick();
    expect(started).toEqual([]);
    expect(verbs).toEqual(['release']);
  });

  it('a process step that throws reports an error and gives the message back', async () => {
    const { dispatch, errors } = dispatcher(1, async () => {
      throw new Error('decoder bug');
    });
    const { delivery, verbs } = fakeDelivery('x');
    dispatch.offer(delivery);
    await tick();
    expect(errors.map((e) => e.message)).toEqual(['decoder bug']);
    expect(verbs).toEqual(['release']);
  });

  it('drain gives waiting deliveries back and reports drained when running ones finish', async () => {
    const { process, running } = manualProcess();
    const { dispatch } = dispatcher(1, process);
    dispatch.offer(fakeDelivery('a').delivery);
    const waiting = fakeDelivery('b');
    dispatch.offer(waiting.delivery);
    dispatch.accepting = false;
    const report = dispatch.drain(1_000, () => new Error('stopped'));
    await tick();
    expect(waiting.verbs).toEqual(['release']);
    running.get('a')?.finish();
    await expect(report).resolves.toEqual({ drained: true, abandoned: 0 });
  });

  it('drain abandons what still runs at the timeout, with the reason given', async () => {
    const { process, running } = manualProcess();
    const { dispatch } = dispatcher(2, process);
    dispatch.offer(fakeDelivery('a').delivery);
    dispatch.offer(fakeDelivery('b').delivery);
    dispatch.accepting = false;
    const reason = new Error('stopped');
    await expect(dispatch.drain(10, () => reason)).resolves.toEqual({
      drained: false,
      abandoned: 2,
    });
    expect(running.get('a')?.abandon.aborted).toBe(true);
    expect(running.get('b')?.abandon.reason).toBe(reason);
  });
});
