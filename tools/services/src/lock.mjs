// @ts-check
// One `up`/`down` at a time per .services/ dir: test runs of several packages, or a test run and
// a CLI call, may ask for the same services at once, and only one of them must start each.
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDir } from './paths.mjs';

/** @type {Promise<unknown>} serialises callers inside this process */
let inProcess = Promise.resolve();

/**
 * Runs fn while holding .services/run/services.lock. A lock left by a dead process is taken over.
 * @template T
 * @param {string} runDir
 * @param {() => Promise<T>} fn
 * @param {{ timeoutMs?: number, onWait?: (ownerPid: number) => void }} [options]
 * @returns {Promise<T>}
 */
export function withLock(runDir, fn, options = {}) {
  const result = inProcess.then(() => withFileLock(runDir, fn, options));
  inProcess = result.catch(() => undefined);
  return result;
}

/**
 * @template T
 * @param {string} runDir
 * @param {() => Promise<T>} fn
 * @param {{ timeoutMs?: number, onWait?: (ownerPid: number) => void }} options
 * @returns {Promise<T>}
 */
async function withFileLock(runDir, fn, options) {
  const path = join(ensureDir(runDir), 'services.lock');
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  let announced = false;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
    }
    const owner = lockOwner(path);
    // An empty lock file is one being written right now, unless it is old.
    const abandoned = owner === null ? ageMs(path) > 5_000 : !isAlive(owner);
    if (abandoned) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${path}, held by pid ${owner}`);
    }
    if (!announced && owner !== null) options.onWait?.(owner);
    announced = true;
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}

/**
 * @param {string} path
 * @returns {number | null}
 */
function lockOwner(path) {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** @param {string} path */
function ageMs(path) {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrno(error, 'EPERM');
  }
}

/**
 * @param {unknown} error
 * @param {string} code
 */
function isErrno(error, code) {
  return error instanceof Error && 'code' in error && error.code === code;
}
