// @ts-check
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const registerTs = fileURLToPath(new URL('./registerTs.mjs', import.meta.url));

/**
 * Runs `source` as an ES module in a new Node process, as a user's short script would run, from
 * `cwd` (relative imports resolve there, and may name `.ts` sources). Resolves once it exited,
 * or after `timeoutMs`, when it is killed and `timedOut` is true.
 * @param {string} source
 * @param {{ cwd: string, timeoutMs?: number, env?: NodeJS.ProcessEnv }} options
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, elapsedMs: number, timedOut: boolean }>}
 */
export function runScript(source, { cwd, timeoutMs = 60_000, env = process.env }) {
  const startedAt = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', registerTs, '--input-type=module', '--eval', source],
    { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, elapsedMs: performance.now() - startedAt, timedOut });
    });
  });
}
