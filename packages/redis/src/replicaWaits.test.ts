import { describe, expect, it } from 'vitest';
import { ReplicaWaits } from './replicaWaits.js';

/** A `send` whose WAITs the test answers one by one. */
function controlledSend() {
  const answers: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const send = () =>
    new Promise<void>((resolve, reject) => {
      answers.push({ resolve, reject });
    });
  return { send, answers };
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('ReplicaWaits', () => {
  it('sends one WAIT for every operation of a tick', async () => {
    const { send, answers } = controlledSend();
    const waits = new ReplicaWaits(send);
    const all = Array.from({ length: 10 }, () => waits.acknowledged());
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits.sent).toBe(1);
    answers[0]?.resolve();
    await Promise.all(all);
  });

  it('never lets an operation join a WAIT already sent: it may have left before its write', async () => {
    const { send, answers } = controlledSend();
    const waits = new ReplicaWaits(send);
    const first = waits.acknowledged();
    await new Promise((resolve) => setImmediate(resolve));
    const second = waits.acknowledged(); // the first WAIT is on the wire
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits.sent).toBe(2);
    answers[0]?.resolve();
    await first;
    expect(await settled(second)).toBe(false);
    answers[1]?.resolve();
    await second;
  });

  it('fails every operation that shared a WAIT when too few replicas acknowledged', async () => {
    const { send, answers } = controlledSend();
    const waits = new ReplicaWaits(send);
    const all = Array.from({ length: 3 }, () => waits.acknowledged().catch((e: Error) => e));
    await new Promise((resolve) => setImmediate(resolve));
    answers[0]?.reject(new Error('only 0 of 1 replicas acknowledged'));
    expect((await Promise.all(all)).map((e) => (e as Error).message)).toEqual([
      'only 0 of 1 replicas acknowledged',
      'only 0 of 1 replicas acknowledged',
      'only 0 of 1 replicas acknowledged',
    ]);
  });
});
