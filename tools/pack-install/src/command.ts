import { execFile } from 'node:child_process';

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command and resolves with its exit code and output, whatever the code. The npm and
 * pnpm settings that `pnpm test` puts in the environment are left out, so that npm runs as in a
 * user's shell.
 */
export function command(
  file: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<CommandResult> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm|pnpm)_/i.test(name)),
  );
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const exitCode = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ exitCode, stdout, stderr });
      },
    );
  });
}

/** The result, or an error that shows the command and everything it printed. */
export async function succeed(
  file: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<CommandResult> {
  const result = await command(file, args, cwd, timeoutMs);
  if (result.exitCode !== 0) {
    throw new Error(
      `${file} ${args.join(' ')} exited ${result.exitCode}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}
