import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import amqplib, { type ChannelModel, type Options } from 'amqplib';

const run = promisify(execFile);

/** Queue depth and consumers as `rabbitmqctl list_queues` reports them. */
export interface QueueCounts {
  ready: number;
  unacked: number;
  consumers: number;
}

/**
 * Broker-side operations through `rabbitmqctl` (the management plugin is not enabled): vhosts
 * per test run, queue depths, killing connections. Needs the local broker and root.
 */
export class BrokerAdmin {
  constructor(private readonly ctl: string) {}

  /** The admin of the local broker, or undefined when rabbitmqctl cannot be used here. */
  static local(): BrokerAdmin | undefined {
    if (process.getuid?.() !== 0) return undefined;
    const ctl = (process.env.PATH ?? '')
      .split(delimiter)
      .concat(['/usr/sbin', '/usr/local/sbin'])
      .map((dir) => join(dir, 'rabbitmqctl'))
      .find((path) => existsSync(path));
    return ctl === undefined ? undefined : new BrokerAdmin(ctl);
  }

  async command(...args: string[]): Promise<string> {
    const { stdout } = await run(this.ctl, args, { timeout: 60_000 });
    return stdout;
  }

  async addVhost(vhost: string): Promise<void> {
    await this.command('add_vhost', vhost);
    await this.command('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
  }

  async deleteVhost(vhost: string): Promise<void> {
    await this.command('delete_vhost', vhost);
  }

  /** Closes every client connection of `vhost`, as a broker restart or a network cut would. */
  async closeAllConnections(vhost: string, reason = 'idemq test'): Promise<void> {
    await this.command('close_all_connections', '-p', vhost, reason);
  }

  /**
   * Suspends (or resumes) the process of queue `queue` (a classic queue's process, a quorum
   * queue's Raft server): it answers nothing — no declare, no consume, no confirm — until
   * resumed, as a queue whose process is blocked or a quorum queue without a leader would.
   */
  async suspendQueue(vhost: string, queue: string, suspend = true): Promise<void> {
    const binary = (text: string) => `<<"${text.replace(/["\\]/g, '\\$&')}"/utf8>>`;
    const call = suspend ? 'suspend' : 'resume';
    const out = await this.command(
      'eval',
      `{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(${binary(vhost)}, queue, ${binary(queue)})), ` +
        `sys:${call}(amqqueue:get_pid(Q)).`,
    );
    if (out.trim() !== 'ok')
      throw new Error(`sys:${call} of queue ${queue} answered ${out.trim()}`);
  }

  /** Ready and unacknowledged messages, and consumers, of every queue of `vhost`. */
  async queues(vhost: string): Promise<Map<string, QueueCounts>> {
    const out = await this.command(
      '-s',
      'list_queues',
      '-p',
      vhost,
      'name',
      'messages_ready',
      'messages_unacknowledged',
      'consumers',
    );
    const counts = new Map<string, QueueCounts>();
    for (const line of out.split('\n')) {
      const [name, ready, unacked, consumers] = line.split('\t');
      if (name && ready !== undefined && unacked !== undefined && consumers !== undefined) {
        counts.set(name, {
          ready: Number(ready),
          unacked: Number(unacked),
          consumers: Number(consumers),
        });
      }
    }
    return counts;
  }
}

/** `url` with its vhost replaced. */
export function withVhost(url: string, vhost: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(vhost)}`;
  return parsed.toString();
}

/**
 * Connections to `url` a transport opens through `connect` (pass it as its `connection`), which
 * `cut()` breaks all at once as a network failure would. The socket is destroyed with an error:
 * amqplib notices a reset or a close from the broker, but a socket destroyed quietly under it
 * leaves the connection hanging.
 */
export function cuttableConnections(url: string | Options.Connect, connectionName?: string) {
  const open = new Set<ChannelModel>();
  return {
    connect: async (): Promise<ChannelModel> => {
      const model = await amqplib.connect(
        url,
        connectionName === undefined
          ? {}
          : { clientProperties: { connection_name: connectionName } },
      );
      open.add(model);
      model.on('close', () => open.delete(model));
      return model;
    },
    /** Breaks every open connection; returns how many there were. */
    cut(): number {
      const count = open.size;
      for (const model of open) {
        (model.connection as unknown as { stream: Socket }).stream.destroy(
          new Error('connection cut (test)'),
        );
      }
      return count;
    },
  };
}
