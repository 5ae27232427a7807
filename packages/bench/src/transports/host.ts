import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { track } from '../children.js';
import { type ConsumerSession, openConsumer } from './consumers.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from './types.js';

/** Parent → child. */
export type ConsumerHostRequest =
  | { type: 'open'; init: ConsumerInit }
  | { type: 'round'; request: ConsumeRequest }
  | { type: 'close' };

/** Child → parent. */
export type ConsumerHostReply =
  | { type: 'opened' }
  | { type: 'round'; result: ConsumeResult }
  | { type: 'closed'; end: ConsumerEnd }
  | { type: 'error'; message: string };

/** Runs the consumer in this process (tests; RSS and CPU are then shared). */
export function openConsumerInline(init: ConsumerInit): Promise<ConsumerSession> {
  return openConsumer(init);
}

/**
 * Runs the consumer in a child process of its own, as the store bench does: its CPU time and
 * peak RSS are its own, and it shares no event loop with the parent, which fills the queues.
 */
export async function openConsumerChild(init: ConsumerInit): Promise<ConsumerSession> {
  const workerPath = fileURLToPath(new URL('./worker.js', import.meta.url));
  const child = track(
    fork(workerPath, [], {
      execArgv: ['--expose-gc', ...(process.env.IDEMQ_BENCH_CHILD_ARGS?.split(' ') ?? [])].filter(
        (arg) => arg.length > 0,
      ),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
  child.on('error', () => undefined); // a failed send rejects its request
  const ask = request(child);
  await ask({ type: 'open', init }, 'opened');
  return {
    async round(consume) {
      return (await ask({ type: 'round', request: consume }, 'round')).result;
    },
    async close() {
      const reply = await ask({ type: 'close' }, 'closed');
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      return reply.end;
    },
  };
}

/** One request at a time: send, then wait for the reply of the expected type (or the child's death). */
function request(child: ChildProcess) {
  return <T extends ConsumerHostReply['type']>(message: ConsumerHostRequest, expected: T) =>
    new Promise<Extract<ConsumerHostReply, { type: T }>>((resolve, reject) => {
      const onMessage = (reply: ConsumerHostReply) => {
        cleanup();
        if (reply.type === expected) resolve(reply as Extract<ConsumerHostReply, { type: T }>);
        else if (reply.type === 'error') reject(new Error(`bench consumer: ${reply.message}`));
        else reject(new Error(`bench consumer answered ${reply.type}, expected ${expected}`));
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`bench consumer exited with ${code} before answering ${message.type}`));
      };
      const cleanup = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      if (!child.connected) {
        reject(new Error(`bench consumer is gone, cannot ${message.type}`));
        return;
      }
      child.on('message', onMessage);
      child.on('exit', onExit);
      // A child killed meanwhile (Ctrl-C) fails the send: reject instead of an 'error' event.
      child.send(message, (error) => {
        if (!error) return;
        cleanup();
        reject(error);
      });
    });
}
