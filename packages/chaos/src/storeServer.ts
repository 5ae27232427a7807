/**
 * The store's own redis-server (F03 stops or SIGKILLs it and starts it again; the shared 6379
 * server is never touched): a free 127.0.0.1 port, append-only with fsync on every write, in a
 * temp directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@idemq/services';
import { Redis } from 'ioredis';

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';

/** What the store's redis-server persists, as the figures report it. */
export const STORE_PROFILE = 'appendonly yes, appendfsync always';

export class StoreServer {
  private child: ChildProcess | undefined;
  /** Restarts after a SIGTERM. */
  restarts = 0;
  /** Restarts after a SIGKILL. */
  kills = 0;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<StoreServer> {
    const server = new StoreServer(await freePort(), mkdtempSync(join(tmpdir(), 'idemq-chaos-')));
    await server.up();
    return server;
  }

  private async up(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir];
    args.push('--save', '', '--appendonly', 'yes', '--appendfsync', 'always');
    const child = spawn(REDIS_SERVER_BIN, args, { stdio: 'ignore' });
    this.child = child;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
      if (await answers(this.port)) return;
      await sleep(50);
    }
    throw new Error(`redis-server on ${this.port} did not answer`);
  }

  /**
   * SIGTERM (Redis fsyncs and exits) or SIGKILL (gone at once: only what `appendfsync always`
   * wrote before each reply survives), then waits for the process to be gone.
   */
  async down(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill(signal);
    });
  }

  /** Down (by `signal`) for `downMs`, then up again on the same port with the same data. */
  async restart(downMs: number, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.down(signal);
    await sleep(downMs);
    await this.up();
    if (signal === 'SIGKILL') this.kills++;
    else this.restarts++;
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function answers(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    // Still loading the append-only file answers LOADING: not ready yet.
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
