import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
