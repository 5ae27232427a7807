import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@idemq/services';
import { Redis } from 'ioredis';

/** A private redis-server on a free port, for tests that stop, restart or replicate a server. */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Kills the server without letting it shut down (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Kills the server and removes its data directory (teardown: nothing needs a clean stop). */
  destroy(): Promise<void>;
}

export async function waitForPing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on ${port} did not answer`);
}

/**
 * Sends `signal` to a server process that is still running and waits until it has exited. One
 * that outlives `graceMs` is killed (SIGKILL), and the call fails naming it, instead of hanging
 * the test.
 */
export async function endProcess(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs = 15_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome !== 'late') return;
  child.kill('SIGKILL');
  await exited;
  throw new Error(`${child.spawnargs.join(' ')} did not exit within ${graceMs} ms of ${signal}`);
}

/** Append-only with fsync always, so records survive a restart as they would in production. */
export async function redisProcess(extraArgs: readonly string[] = []): Promise<RedisProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'idemq-redis-'));
  let child: ChildProcess | undefined;
  const end = (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    return running ? endProcess(running, signal) : Promise.resolve();
  };
  const stop = () => end('SIGTERM');
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          '--save',
          '',
          // A replica's first sync would otherwise wait 5 s for more replicas to share it.
          '--repl-diskless-sync-delay',
          '0',
          ...extraArgs,
        ],
        { stdio: 'ignore' },
      );
      await waitForPing(port);
    },
    stop,
    kill: () => end('SIGKILL'),
    async destroy() {
      // Not SIGTERM: a graceful shutdown can wait (a primary waits up to shutdown-timeout for
      // its replicas), and once in CI a Sentinel suite's teardown outlived its 60 s hook with
      // all three servers still running afterwards. A kill cannot hang.
      await end('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
