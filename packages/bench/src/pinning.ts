import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** Where the bench put Redis and itself, and how to put Redis back. */
export interface Pinning {
  /** For the report: "Redis on CPU 0, the bench and its children on CPU 1", or why not. */
  description: string;
  /** Gives Redis back the CPUs it had. */
  restore(): void;
}

/**
 * Pins a local Redis to CPU 0 and this process to the other CPUs (the contenders' child
 * processes inherit it), as a deployment has Redis on a machine of its own: the client's CPU
 * then measures the client alone, and neither steals the other's core. Needs `taskset` (Linux),
 * two CPUs or more and Redis on this machine (`redisPid` from `INFO server`); otherwise nothing
 * is changed and the description says why.
 */
export function pinCores(redisUrl: string, redisPid: number | undefined): Pinning {
  const unpinned = (why: string): Pinning => ({ description: `not pinned (${why})`, restore() {} });
  const cpus = os.cpus().length;
  if (cpus < 2) return unpinned('one CPU');
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(redisUrl).hostname))
    return unpinned('Redis is not on this machine');
  if (redisPid === undefined) return unpinned('Redis did not give its process id');
  const others = cpus === 2 ? '1' : `1-${cpus - 1}`;
  try {
    const before = affinityList(redisPid);
    execFileSync('taskset', ['-cp', '0', String(redisPid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-cp', others, String(process.pid)], { stdio: 'ignore' });
    return {
      description: `Redis pinned to CPU 0, the bench and its contenders to CPU ${others} (taskset)`,
      restore() {
        execFileSync('taskset', ['-cp', before, String(redisPid)], { stdio: 'ignore' });
      },
    };
  } catch (error) {
    return unpinned(`taskset failed: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The CPU list a process may run on (`taskset -cp <pid>`: "pid 12's current affinity list: 0,1"). */
function affinityList(pid: number): string {
  const out = execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' });
  const list = /list:\s*(\S+)/.exec(out)?.[1];
  if (!list) throw new Error(`cannot read the affinity of ${pid}: ${out.trim()}`);
  return list;
}
