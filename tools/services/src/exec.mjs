// @ts-check
// Running short-lived commands (mvn, java StorageTool, redis-cli, apt-get) with output kept in a
// log file, and finding executables on PATH.
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, writeSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Absolute path of an executable on PATH (plus sbin dirs, where Debian puts daemons), or null.
 * @param {string} command
 * @returns {string | null}
 */
export function which(command) {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const extra of ['/usr/local/sbin', '/usr/sbin', '/sbin']) {
    if (!dirs.includes(extra)) dirs.push(extra);
  }
  for (const dir of dirs) {
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * @typedef {object} RunOptions
 * @property {string} [cwd]
 * @property {NodeJS.ProcessEnv} [env]
 * @property {string} [logFile]   append the command line and its output here
 * @property {number} [timeoutMs] kill the command (SIGKILL) after this long
 * @property {number} [uid]       run as this user (root only)
 * @property {number} [gid]
 */

/**
 * @typedef {object} RunResult
 * @property {number | null} code
 * @property {string} output  stdout and stderr interleaved
 */

/**
 * Runs a command to completion; never rejects for a non-zero exit (check `code`).
 * @param {string} command
 * @param {readonly string[]} args
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const logFd = options.logFile ? openSync(options.logFile, 'a') : null;
    if (logFd !== null) writeSync(logFd, `\n$ ${[command, ...args].join(' ')}\n`);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    /** @type {Buffer[]} */
    const chunks = [];
    /** @param {Buffer} chunk */
    const collect = (chunk) => {
      chunks.push(chunk);
      if (logFd !== null) writeSync(logFd, chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      if (logFd !== null) closeSync(logFd);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (logFd !== null) closeSync(logFd);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}
