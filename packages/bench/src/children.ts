import type { ChildProcess } from 'node:child_process';

/** Child processes the bench started and that are still running. */
const live = new Set<ChildProcess>();

/** Remembers `child` until it exits, so an interrupted run can end it. */
export function track<C extends ChildProcess>(child: C): C {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Ends every child at once (an interrupted run, before its keys are deleted). */
export function killChildren(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}
