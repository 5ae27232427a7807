import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { track } from './children.js';
import { type RoundResult, Session, type SessionEnd, type SessionInit } from './session.js';

/** A session, wherever it runs. */
export interface SessionHost {
  round(run: number, ids: number): Promise<RoundResult>;
  close(): Promise<SessionEnd>;
}

/** Parent → child. */
export type HostRequest =
  | { type: 'open'; init: SessionInit }
  | { type: 'round'; run: number; ids: number }
  | { type: 'close' };

/** Child → parent. */
export type HostReply =
  | { type: 'opened' }
  | { type: 'round'; result: RoundResult }
  | { type: 'closed'; end: SessionEnd }
  | { type: 'error'; message: string };

/** Runs the session in this process (tests; RSS is then shared). */
export async function openInline(init: SessionInit): Promise<SessionHost> {
  const session = await Session.open(init);
  return { round: (run, ids) => session.round(run, ids), close: () => session.close() };
}

/**
 * Runs the session in a child process of its own, so its peak RSS is its own and no contender
 * inherits another's heap, JIT state or timers. `--expose-gc` lets every round start clean.
 */
export async function openChild(init: SessionInit): Promise<SessionHost> {
  const workerPath = fileURLToPath(new URL('./worker.js', import.meta.url));
  const child = track(
    fork(workerPath, [], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
  const ask = request(child);
  await ask({ type: 'open', init }, 'opened');
  return {
    async round(run, ids) {
      const reply = await ask({ type: 'round', run, ids }, 'round');
      return reply.result;
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
  return <T extends HostReply['type']>(message: HostRequest, expected: T) =>
    new Promise<Extract<HostReply, { type: T }>>((resolve, reject) => {
      const onMessage = (reply: HostReply) => {
        cleanup();
        if (reply.type === expected) resolve(reply as Extract<HostReply, { type: T }>);
        else if (reply.type === 'error') reject(new Error(`bench worker: ${reply.message}`));
        else reject(new Error(`bench worker answered ${reply.type}, expected ${expected}`));
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`bench worker exited with ${code} before answering ${message.type}`));
      };
      const cleanup = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send(message);
    });
}
