import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of `/proc/<pid>/stat` the bench reads. */
interface ProcStat {
  comm: string;
  ppid: number;
  /** utime + stime, clock ticks. */
  ownTicks: number;
  /** cutime + cstime: the time of its children it has reaped, clock ticks. */
  reapedTicks: number;
}

/** `/proc/<pid>/stat`, or undefined when the process is gone (or this is not Linux). */
function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command may hold spaces and parentheses: the fields start after its last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const at = (n: number) => Number(fields[n - 3]);
  return {
    comm: text.slice(text.indexOf('(') + 1, close),
    ppid: at(4),
    ownTicks: at(14) + at(15),
    reapedTicks: at(16) + at(17),
  };
}

/**
 * The postmaster of a PostgreSQL on this machine, from the process id a backend reported
 * (`pg_backend_pid()`): its parent. Undefined when no such postgres process is visible here (a
 * remote server, or one in another pid namespace).
 */
export function postmasterOf(backendPid: number): number | undefined {
  const backend = procStat(backendPid);
  if (backend?.comm !== 'postgres') return undefined;
  const postmaster = procStat(backend.ppid);
  return postmaster?.comm === 'postgres' ? backend.ppid : undefined;
}

/** The postmaster and every process it has started (backends, WAL writer, checkpointer …). */
export function postgresPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    if (procStat(pid)?.ppid === postmaster) pids.push(pid);
  }
  return pids;
}

/**
 * CPU time (user + system) the whole server has spent so far, µs: the postmaster's own, that of
 * its live children, and that of children which have exited (the postmaster's cutime/cstime), so
 * a backend that ends between two readings is not lost. Resolution: one clock tick (10 ms).
 */
export function postgresCpuMicros(postmaster: number): number {
  const main = procStat(postmaster);
  if (!main) return Number.NaN;
  let ticks = main.ownTicks + main.reapedTicks;
  for (const pid of postgresPids(postmaster).slice(1)) ticks += procStat(pid)?.ownTicks ?? 0;
  return (ticks * 1e6) / clockTicksPerSecond();
}

let ticksPerSecond: number | undefined;

/** `getconf CLK_TCK` (100 on Linux), read once. */
function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = Number.NaN;
    }
    if (!(ticksPerSecond > 0)) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}
