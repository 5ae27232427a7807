import { fork } from 'node:child_process';
import { once } from 'node:events';

/** A server in a child process, and how to end it. */
export interface ForkedServer<Ready> {
  /** What the process sent once it was listening (its URL or address). */
  ready: Ready;
  /** SIGKILLs the process; resolves once it exited. */
  kill(): Promise<void>;
  /** SIGTERMs the process (it stops gracefully); resolves once it exited. */
  close(): Promise<void>;
}

/**
 * Forks `entry` with `config` as its one argument (JSON) and waits for its first IPC message,
 * which says it is listening: how a harness starts the server process of a crash case (H08, G12).
 */
export async function forkServerProcess<Ready>(
  entry: string,
  config: unknown,
): Promise<ForkedServer<Ready>> {
  const child = fork(entry, [JSON.stringify(config)], { stdio: 'inherit' });
  const exited = once(child, 'exit');
  const [ready] = (await Promise.race([
    once(child, 'message'),
    exited.then(() => {
      throw new Error(`the server process ${entry} exited before listening`);
    }),
  ])) as [Ready];
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
  };
  return { ready, kill: () => end('SIGKILL'), close: () => end('SIGTERM') };
}
