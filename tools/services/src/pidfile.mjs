// @ts-check
// Pid files for the processes that `up` started, and stopping them by pid: never by process
// name, and only after checking that the pid still runs the command we started (pids get reused).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * @typedef {object} PidRecord
 * @property {number} pid
 * @property {string} service    e.g. "kafka", "redis-cluster-7001"
 * @property {string} marker     a string that must appear in the process's command line
 * @property {string} startedAt  ISO time
 * @property {string} [version]
 * @property {string} [logFile]
 */

/**
 * @param {string} runDir
 * @param {string} id
 */
export function pidFilePath(runDir, id) {
  return join(runDir, `${id}.pid.json`);
}

/**
 * Writes atomically (tmp + rename), so a reader never sees half a record.
 * @param {string} runDir
 * @param {PidRecord} record
 */
export function writePidFile(runDir, record) {
  const path = pidFilePath(runDir, record.service);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

/**
 * @param {string} runDir
 * @param {string} id
 * @returns {PidRecord | null}
 */
export function readPidFile(runDir, id) {
  const path = pidFilePath(runDir, id);
  if (!existsSync(path)) return null;
  try {
    /** @type {unknown} */
    const parsed = JSON.parse(readFileSync(path, 'utf8'));
    if (isPidRecord(parsed)) return parsed;
  } catch {
    // unreadable: treated as absent below
  }
  rmSync(path, { force: true });
  return null;
}

/**
 * @param {unknown} value
 * @returns {value is PidRecord}
 */
function isPidRecord(value) {
  if (typeof value !== 'object' || value === null) return false;
  const record = /** @type {Record<string, unknown>} */ (value);
  return (
    typeof record.pid === 'number' &&
    Number.isInteger(record.pid) &&
    record.pid > 1 &&
    typeof record.service === 'string' &&
    typeof record.marker === 'string'
  );
}

/**
 * @param {string} runDir
 * @param {string} id
 */
export function removePidFile(runDir, id) {
  rmSync(pidFilePath(runDir, id), { force: true });
}

/**
 * The command line of a live process, or null if there is none (or it is a zombie).
 * @param {number} pid
 * @returns {string | null}
 */
export function commandLineOf(pid) {
  if (process.platform === 'linux') {
    try {
      const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return raw.length > 0 ? raw.split('\0').join(' ').trim() : null;
    } catch {
      return null;
    }
  }
  try {
    const out = execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
    return out.trim() || null;
  } catch {
    return null;
  }
}

/**
 * True when the pid is alive and still runs the command recorded in the pid file.
 * @param {PidRecord} record
 */
export function isRunning(record) {
  const commandLine = commandLineOf(record.pid);
  return commandLine?.includes(record.marker) === true;
}

/**
 * Stops the recorded process: `signal` (SIGTERM unless the service shuts down cleanly on another
 * one), then SIGKILL after graceMs. Signals only that pid, and only if it still runs the
 * recorded command. Removes the pid file.
 * @param {string} runDir
 * @param {PidRecord} record
 * @param {number} [graceMs]
 * @param {NodeJS.Signals} [signal]
 * @returns {Promise<'stopped' | 'killed' | 'not-running'>}
 */
export async function stopRecorded(runDir, record, graceMs = 30_000, signal = 'SIGTERM') {
  if (!isRunning(record)) {
    removePidFile(runDir, record.service);
    return 'not-running';
  }
  process.kill(record.pid, signal);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isRunning(record)) {
      removePidFile(runDir, record.service);
      return 'stopped';
    }
    await sleep(100);
  }
  if (isRunning(record)) process.kill(record.pid, 'SIGKILL');
  while (isRunning(record)) await sleep(50);
  removePidFile(runDir, record.service);
  return 'killed';
}
