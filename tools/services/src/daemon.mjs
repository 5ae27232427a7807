// @ts-check
// Starting a long-running process in the background: own session (survives the CLI or test run
// that started it), output to a log file, pid file written at once.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { writePidFile } from './pidfile.mjs';

/**
 * @typedef {object} DaemonSpec
 * @property {string} id         pid file name, e.g. "kafka"
 * @property {string} command
 * @property {readonly string[]} args
 * @property {string} marker     must appear in the command line (checked before stopping)
 * @property {string} logFile
 * @property {string} runDir
 * @property {string} [cwd]
 * @property {NodeJS.ProcessEnv} [env]
 * @property {string} [version]
 * @property {number} [uid]      run as this user (root only)
 * @property {number} [gid]
 */

/**
 * @param {DaemonSpec} spec
 * @returns {import('./pidfile.mjs').PidRecord}
 */
export function spawnDaemon(spec) {
  rotateIfLarge(spec.logFile);
  const fd = openSync(spec.logFile, 'a');
  writeSync(
    fd,
    `\n=== ${new Date().toISOString()} starting: ${spec.command} ${spec.args.join(' ')}\n`,
  );
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
    });
    // Spawn failures (e.g. ENOENT) also arrive as an 'error' event; the missing pid reports them.
    child.on('error', () => {});
    if (child.pid === undefined) throw new Error(`could not start ${spec.command}`);
    child.unref();
    /** @type {import('./pidfile.mjs').PidRecord} */
    const record = {
      pid: child.pid,
      service: spec.id,
      marker: spec.marker,
      startedAt: new Date().toISOString(),
      logFile: spec.logFile,
      ...(spec.version ? { version: spec.version } : {}),
    };
    writePidFile(spec.runDir, record);
    return record;
  } finally {
    closeSync(fd);
  }
}

/**
 * Keeps one previous log (<file>.1) once a log passes 10 MiB, so .services/ does not grow forever.
 * @param {string} file
 */
function rotateIfLarge(file) {
  if (existsSync(file) && statSync(file).size > 10 * 1024 * 1024) renameSync(file, `${file}.1`);
}
