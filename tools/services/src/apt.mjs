// @ts-check
// Installing Debian packages when a service is missing, only as root and only where apt exists.
import { join } from 'node:path';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';
import { formatBlock, tailFile } from './logTail.mjs';
import { ensureDir } from './paths.mjs';

let listsUpdated = false;

/** @type {Promise<unknown>} dpkg takes one install at a time */
let queue = Promise.resolve();

/** True when `apt-get install` can run here without asking anyone. */
export function canAptInstall() {
  return process.platform === 'linux' && process.getuid?.() === 0 && which('apt-get') !== null;
}

/**
 * apt-get install (after one apt-get update per process), one at a time; skipped when
 * isInstalled() turns true while waiting. Output goes to .services/logs/apt.log.
 * @param {string} service
 * @param {readonly string[]} packages
 * @param {() => boolean} isInstalled
 * @param {import('./paths.mjs').ServiceDirs} dirs
 * @param {(message: string) => void} log
 * @returns {Promise<void>}
 */
export function aptInstall(service, packages, isInstalled, dirs, log) {
  const result = queue.then(() =>
    isInstalled() ? undefined : install(service, packages, dirs, log),
  );
  queue = result.catch(() => undefined);
  return result;
}

/**
 * @param {string} service
 * @param {readonly string[]} packages
 * @param {import('./paths.mjs').ServiceDirs} dirs
 * @param {(message: string) => void} log
 */
async function install(service, packages, dirs, log) {
  const logFile = join(ensureDir(dirs.logs), 'apt.log');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log(`${service}: installing ${packages.join(' ')} with apt-get (log: ${logFile})...`);
  if (!listsUpdated) {
    await run('apt-get', ['update'], { env, logFile, timeoutMs: 10 * 60_000 });
    listsUpdated = true;
  }
  const { code } = await run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
    env,
    logFile,
    timeoutMs: 15 * 60_000,
  });
  if (code !== 0) {
    throw new ServiceError(
      service,
      `apt-get install ${packages.join(' ')} failed (exit ${code})\n${formatBlock(`  last lines of ${logFile}:`, tailFile(logFile, 20))}`,
    );
  }
}
