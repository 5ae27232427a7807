/**
 * A RabbitMQ node of the suite's own, so that F04 can restart a real broker without touching the
 * shared one: the installed `rabbitmq-server` started as the current user on free 127.0.0.1 ports,
 * with its own node name, data, logs, config and Erlang cookie (HOME) in a temp directory.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from '@idemq/services';
import amqplib from 'amqplib';

const run = promisify(execFile);

/**
 * The server script itself, not Debian's `/usr/sbin` wrapper, which switches to the `rabbitmq`
 * user (who cannot use this user's temp directory or cookie).
 */
const DEBIAN_BIN = '/usr/lib/rabbitmq/bin';
const binary = (name: string) =>
  process.env.RABBITMQ_BIN_DIR
    ? join(process.env.RABBITMQ_BIN_DIR, name)
    : existsSync(join(DEBIAN_BIN, name))
      ? join(DEBIAN_BIN, name)
      : name;

export class RabbitmqServer {
  private child: ChildProcess | undefined;
  restarts = 0;

  private constructor(
    readonly port: number,
    private readonly distPort: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  get nodeName(): string {
    return `idemq-chaos-${this.port}@localhost`;
  }

  static async start(): Promise<RabbitmqServer> {
    const dir = mkdtempSync(join(tmpdir(), 'idemq-chaos-rabbitmq-'));
    const server = new RabbitmqServer(await freePort(), await freePort(), dir);
    writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${server.port}\n`);
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
    // Empty: the system's rabbitmq-env.conf names the system node.
    writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
    try {
      await server.up();
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  private env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      // The node's Erlang cookie is created here, and rabbitmqctl reads the same one.
      HOME: this.dir,
      RABBITMQ_CONF_ENV_FILE: join(this.dir, 'rabbitmq-env.conf'),
      RABBITMQ_NODENAME: this.nodeName,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(this.port),
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(this.dir, 'log'),
      RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq.conf'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      RABBITMQ_PID_FILE: join(this.dir, 'rabbitmq.pid'),
      ERL_EPMD_ADDRESS: '127.0.0.1',
    };
  }

  /** Starts the node and waits until it takes an AMQP connection. */
  private async up(): Promise<void> {
    const child = spawn(binary('rabbitmq-server'), [], {
      cwd: this.dir,
      env: this.env(),
      stdio: 'ignore',
    });
    this.child = child;
    let failure: Error | undefined;
    child.once('error', (error) => {
      failure = error;
    });
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (failure) throw new Error(`rabbitmq-server did not start: ${failure.message}`);
      if (child.exitCode !== null) {
        throw new Error(`rabbitmq-server exited (${child.exitCode}); logs in ${this.dir}/log`);
      }
      if (await this.answers()) return;
      await sleep(250);
    }
    throw new Error(`rabbitmq-server on ${this.port} did not answer within 90 s`);
  }

  private async answers(): Promise<boolean> {
    try {
      const connection = await amqplib.connect(this.url, { timeout: 1_000 });
      await connection.close();
      return true;
    } catch {
      return false;
    }
  }

  /** SIGTERM (RabbitMQ shuts down cleanly), then waits for the node to be gone. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  }

  /** Down for `downMs`, then up again on the same ports with the same data. */
  async restart(downMs: number): Promise<void> {
    await this.down();
    await sleep(downMs);
    await this.up();
    this.restarts++;
  }

  /** `rabbitmqctl` against this node. */
  async ctl(...args: string[]): Promise<{ stdout: string }> {
    return run(binary('rabbitmqctl'), ['-n', this.nodeName, ...args], {
      env: this.env(),
      timeout: 60_000,
    });
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
