/**
 * The consumers of a run: child processes (`fork` of `dist/child.js`), or in-process workers for
 * the memory transport. Killing one (SIGKILL, or a simulated crash in-process) starts a
 * replacement, so the pool keeps its size.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryBroker, Store } from '@idemq/core';
import type { ChildMessage, ParentMessage } from './child.js';
import { type RunningWorker, startWorker, type WorkerConfig } from './worker.js';

/**
 * The compiled child entry. Under vitest this module runs from `src/*.ts`, and a child process
 * runs plain Node: it takes `dist/child.js` (the test setup builds it first).
 */
const here = fileURLToPath(import.meta.url);
const CHILD_ENTRY = here.endsWith('.ts')
  ? join(dirname(here), '..', 'dist', 'child.js')
  : join(dirname(here), 'child.js');

interface Member {
  id: string;
  child?: ChildProcess;
  local?: RunningWorker;
}

export class WorkerPool {
  private readonly members: Member[] = [];
  /** In-process workers crashed on purpose: frozen until the run ends, then disposed. */
  private readonly crashed: RunningWorker[] = [];
  private next = 0;

  /**
   * `broker` set: in-process workers on that broker (memory transport), each with a store from
   * `openStore` when given (child processes always open the Redis store of their config).
   */
  constructor(
    private readonly config: Omit<WorkerConfig, 'workerId'>,
    private readonly broker?: MemoryBroker,
    private readonly openStore?: () => Store,
  ) {
    if (openStore && !broker) throw new Error('openStore needs in-process workers (a broker)');
  }

  get size(): number {
    return this.members.length;
  }

  get inProcess(): boolean {
    return this.broker !== undefined;
  }

  async start(count: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => this.spawn()));
  }

  private async spawn(): Promise<void> {
    const id = `w${this.next++}`;
    const config: WorkerConfig = { ...this.config, workerId: id };
    if (this.broker) {
      this.members.push({ id, local: await startWorker(config, this.broker, this.openStore) });
      return;
    }
    const child = fork(CHILD_ENTRY, [], {
      // Plain Node: not the loader flags of whoever runs the pool (vitest, say).
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // NODE_NO_WARNINGS: the AWS SDK's Node-version notice would repeat for every consumer.
      env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', NODE_NO_WARNINGS: '1' },
    });
    const member: Member = { id, child };
    this.members.push(member);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: ChildMessage) => {
        if (message.type === 'ready') {
          child.off('message', onMessage);
          resolve();
        } else if (message.type === 'failed') {
          reject(new Error(`consumer ${id} failed to start: ${message.error}`));
        }
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`consumer ${id} exited (${code})`)));
      child.send({ type: 'start', config } satisfies ParentMessage);
    });
  }

  /** SIGKILLs (or crashes) one random consumer and starts a replacement. */
  async killOne(random: () => number): Promise<void> {
    const index = Math.floor(random() * this.members.length);
    const [victim] = this.members.splice(index, 1);
    if (!victim) return;
    if (victim.local) {
      await victim.local.crash();
      this.crashed.push(victim.local);
    } else if (victim.child) {
      const exited = new Promise((resolve) => victim.child?.once('exit', resolve));
      victim.child.kill('SIGKILL');
      await exited;
    }
    await this.spawn();
  }

  /** Asks every child to cut its transport's TCP connections; returns the sockets cut. */
  async cutConnections(): Promise<number> {
    const counts = await Promise.all(
      this.members.map(async (member) => {
        if (member.local) return member.local.cutConnections();
        const child = member.child;
        if (!child?.connected) return 0;
        return new Promise<number>((resolve) => {
          const onMessage = (message: ChildMessage) => {
            if (message.type !== 'cut') return;
            child.off('message', onMessage);
            resolve(message.sockets);
          };
          child.on('message', onMessage);
          child.send({ type: 'cut' } satisfies ParentMessage);
        });
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Crashes every in-process worker and starts fresh ones: the memory transport's "restart". */
  async restartAll(random: () => number): Promise<void> {
    const count = this.members.length;
    for (let i = 0; i < count; i++) await this.killOne(random);
  }

  /** Graceful stop of every consumer. */
  async stop(): Promise<void> {
    for (const worker of this.crashed.splice(0)) await worker.dispose();
    const members = this.members.splice(0);
    await Promise.all(
      members.map(async (member) => {
        if (member.local) return member.local.stop();
        const child = member.child;
        if (!child || child.exitCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
        else child.kill('SIGKILL');
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
