import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { sleep } from './wait.js';

/**
 * The file a crash case's server processes append `start <pid>` and `end <pid>` to, in a
 * temporary folder the case removes: it counts handler runs across a SIGKILL.
 */
export class RunLog {
  private constructor(
    readonly file: string,
    private readonly dir: string,
  ) {}

  /** A new, empty log; `remove` deletes it. */
  static async create(prefix: string): Promise<RunLog> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    return new RunLog(join(dir, 'runs'), dir);
  }

  async lines(): Promise<string[]> {
    return (await readFile(this.file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  }

  /** How many runs started and how many ended. */
  async counts(): Promise<{ starts: number; ends: number }> {
    const lines = await this.lines();
    return {
      starts: lines.filter((line) => line.startsWith('start')).length,
      ends: lines.filter((line) => line.startsWith('end')).length,
    };
  }

  remove(): Promise<void> {
    return rm(this.dir, { recursive: true, force: true });
  }
}

/** How a crash case retries its request against the surviving process. */
export interface RetryPastLease<T> {
  send(): Promise<T>;
  /** True for the refusal a live lease gives (HTTP 409, gRPC ABORTED); checked by `onRefused`. */
  refused(answer: T): boolean;
  onRefused(answer: T): Promise<void> | void;
  /** When the killed process's request was sent: its lease cannot lapse before `leaseMs` after. */
  sentAt: number;
  leaseMs: number;
  /** How long to keep retrying, in ms. */
  timeoutMs: number;
}

/**
 * Retries every 100 ms until an answer is not refused, and asserts that it did not come while
 * the dead process's lease was still live; returns it with the number of refusals before it.
 */
export async function retryPastLease<T>(
  retry: RetryPastLease<T>,
): Promise<{ answer: T; refusals: number }> {
  const deadline = performance.now() + retry.timeoutMs;
  let refusals = 0;
  while (performance.now() < deadline) {
    const answer = await retry.send();
    if (!retry.refused(answer)) {
      expect(
        performance.now() - retry.sentAt < retry.leaseMs,
        'the dead process lease was still live',
      ).toBe(false);
      return { answer, refusals };
    }
    refusals += 1;
    await retry.onRefused(answer);
    await sleep(100);
  }
  throw new Error('the retry never ran after the lease lapsed');
}
