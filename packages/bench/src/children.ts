import type { ChildProcess } from 'node:child_process';

/** Child processes the bench started and that are still running. */
const live = new Set<ChildProcess>();

/** Set once the run was interrupted: a child started after that is ended at once. */
let ended = false;

/** Remembers `child` until it exits, so an interrupted run can end it. */
export function track<C extends ChildProcess>(child: C): C {
  if (ended) {
    child.kill('SIGKILL');
    return child;
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/**
 * Ends every child at once, and any started later (an interrupted run, before its keys are
 * deleted, while the run itself is still unwinding).
 */
export function killChildren(): void {
  ended = true;
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}
