import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { track } from './children.js';

/** A measured session, wherever it runs: opened once, then asked for round after round. */
export interface SessionHandle<Request, Result, End> {
  round(request: Request): Promise<Result>;
  close(): Promise<End>;
}

/** Parent → child. */
export type SessionRequest<Init, Request> =
  | { type: 'open'; init: Init }
  | { type: 'round'; request: Request }
  | { type: 'close' };

/** Child → parent. */
export type SessionReply<Result, End> =
  | { type: 'opened' }
  | { type: 'round'; result: Result }
  | { type: 'closed'; end: End }
  | { type: 'error'; message: string };

/**
 * Runs a session in a child process of its own (the module at `workerUrl`, which calls
 * `serveSession`), so its CPU time and peak RSS are its own and it inherits no other session's
 * heap, JIT state or timers. `--expose-gc` lets every round start clean;
 * `IDEMQ_BENCH_CHILD_ARGS` adds Node flags (e.g. `--cpu-prof`).
 *
 * @example
 * const session = await childSession<Init, Req, Res, End>(new URL('./worker.js', import.meta.url), init);
 */
export async function childSession<Init, Request, Result, End>(
  workerUrl: URL,
  init: Init,
): Promise<SessionHandle<Request, Result, End>> {
  const child = track(
    fork(fileURLToPath(workerUrl), [], {
      execArgv: ['--expose-gc', ...(process.env.IDEMQ_BENCH_CHILD_ARGS?.split(' ') ?? [])].filter(
        (arg) => arg.length > 0,
      ),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
  child.on('error', () => undefined); // a failed send rejects its request
  const ask = requester<Init, Request, Result, End>(child);
  await ask({ type: 'open', init }, 'opened');
  return {
    async round(request) {
      return (await ask({ type: 'round', request }, 'round')).result;
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
function requester<Init, Request, Result, End>(child: ChildProcess) {
  type Reply = SessionReply<Result, End>;
  return <T extends Reply['type']>(message: SessionRequest<Init, Request>, expected: T) =>
    new Promise<Extract<Reply, { type: T }>>((resolve, reject) => {
      const onMessage = (reply: Reply) => {
        cleanup();
        if (reply.type === expected) resolve(reply as Extract<Reply, { type: T }>);
        else if (reply.type === 'error') reject(new Error(`bench session: ${reply.message}`));
        else reject(new Error(`bench session answered ${reply.type}, expected ${expected}`));
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`bench session exited with ${code} before answering ${message.type}`));
      };
      const cleanup = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      if (!child.connected) {
        reject(new Error(`bench session is gone, cannot ${message.type}`));
        return;
      }
      child.on('message', onMessage);
      child.on('exit', onExit);
      // A child killed meanwhile (Ctrl-C) fails the send (ERR_IPC_CHANNEL_CLOSED, or EPIPE when
      // it dies mid-write): reject instead of an 'error' event.
      child.send(message, (error) => {
        if (!error) return;
        cleanup();
        reject(new Error(`bench session is gone, cannot ${message.type} (${error.message})`));
      });
    });
}
