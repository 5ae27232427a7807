import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** Where the bench put the servers and itself, and how to put the servers back. */
export interface Pinning {
  /** For the report: "Redis pinned to CPU 0, the bench and its contenders to CPU 1", or why not. */
  description: string;
  /** Gives the servers back the CPUs they had (once; also done when the process exits). */
  restore(): void;
}

/** A server the bench may pin. */
export interface PinnableServer {
  /** As the report names it: `Redis`, `PostgreSQL`. */
  name: string;
  /** On this machine (only then can it be pinned). */
  local: boolean;
  /**
   * Its processes now, the main one first (asked again on restore: PostgreSQL starts a process
   * per connection); undefined when the server did not say which they are.
   */
  pids: (() => number[]) | undefined;
}

/**
 * Pins every server on this machine to CPU 0 and this process to the other CPUs (the
 * contenders' child processes inherit it), as a deployment has its store on a machine of its
 * own: the client's CPU then measures the client alone, and neither steals the other's core.
 * Processes a server starts later inherit its main process's CPU. Needs `taskset` (Linux), two
 * CPUs or more and the server's process ids; a server that cannot be pinned is left as it is,
 * and the description says why.
 */
export function pinCores(servers: readonly PinnableServer[]): Pinning {
  const unpinned = (why: string): Pinning => ({ description: `not pinned (${why})`, restore() {} });
  const cpus = os.cpus().length;
  if (cpus < 2) return unpinned('one CPU');
  const others = cpus === 2 ? '1' : `1-${cpus - 1}`;
  const pinned: { server: PinnableServer; before: string }[] = [];
  const left: string[] = [];
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    process.off('exit', restore);
    for (const { server, before } of pinned) {
      try {
        setAffinity(server.pids?.() ?? [], before);
      } catch {
        // Gone (a server stopped meanwhile): nothing to give back.
      }
    }
  };
  try {
    for (const server of servers) {
      const why = unpinnable(server);
      if (why) {
        left.push(why);
        continue;
      }
      const pids = server.pids?.() ?? [];
      const before = affinityList(pids[0] as number);
      pinned.push({ server, before });
      setAffinity(pids, '0');
    }
    if (pinned.length > 0) {
      execFileSync('taskset', ['-cp', others, String(process.pid)], { stdio: 'ignore' });
      // An interrupted run exits without unwinding: the servers get their CPUs back all the same.
      process.on('exit', restore);
    }
  } catch (error) {
    restore();
    return unpinned(`taskset failed: ${(error as Error).message.split('\n')[0]}`);
  }
  if (pinned.length === 0) return unpinned(left.join('; '));
  const names = pinned.map(({ server }) => server.name).join(' and ');
  const description =
    `${names} pinned to CPU 0, the bench and its contenders to CPU ${others} (taskset)` +
    (left.length > 0 ? `; not pinned: ${left.join('; ')}` : '');
  return { description, restore };
}

/** A server URL on the loopback interface: the server runs on this machine. */
export function isLoopbackUrl(url: string): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
}

/** Why `server` cannot be pinned, or undefined when it can. */
function unpinnable(server: PinnableServer): string | undefined {
  if (!server.local) return `${server.name} is not on this machine`;
  if (!server.pids || server.pids().length === 0)
    return `${server.name} did not give its process id`;
  return undefined;
}

/** Sets the CPU list of each process; one that has exited meanwhile is skipped. */
function setAffinity(pids: readonly number[], cpus: string): void {
  const [main, ...rest] = pids;
  if (main === undefined) return;
  execFileSync('taskset', ['-cp', cpus, String(main)], { stdio: 'ignore' });
  for (const pid of rest) {
    try {
      execFileSync('taskset', ['-cp', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // Gone since it was listed.
    }
  }
}

/** The CPU list a process may run on (`taskset -cp <pid>`: "pid 12's current affinity list: 0,1"). */
function affinityList(pid: number): string {
  const out = execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' });
  const list = /list:\s*(\S+)/.exec(out)?.[1];
  if (!list) throw new Error(`cannot read the affinity of ${pid}: ${out.trim()}`);
  return list;
}
