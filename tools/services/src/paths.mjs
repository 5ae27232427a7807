// @ts-check
// Where things live: the repo's tools/brokers configs and the gitignored .services/ work dir.
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Repository root: this file is tools/services/src/paths.mjs. */
export const repoRoot = resolve(here, '..', '..', '..');

/** Checked-in broker configs and POMs (tools/brokers). */
export const brokersDir = join(repoRoot, 'tools', 'brokers');

/**
 * @typedef {object} ServiceDirs
 * @property {string} root  .services/ (or $IDEMQ_SERVICES_DIR)
 * @property {string} run   pid files and the lock
 * @property {string} logs  one log per process, plus Maven and apt logs
 * @property {string} lib   broker jars copied out of ~/.m2, one folder per POM + version; kept
 *   outside .services/ (default ~/.cache/idemq-services/lib, or $IDEMQ_SERVICES_CACHE/lib) so that
 *   a fresh clone or a wiped .services/ starts the brokers without running Maven again
 */

/**
 * The work dir for data, logs and pid files. IDEMQ_SERVICES_DIR lets a second checkout or a
 * sandboxed run keep its own pid files apart.
 * @returns {ServiceDirs}
 */
export function serviceDirs() {
  const root = resolve(process.env.IDEMQ_SERVICES_DIR || join(repoRoot, '.services'));
  const cache = resolve(
    process.env.IDEMQ_SERVICES_CACHE ||
      join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'idemq-services'),
  );
  return { root, run: join(root, 'run'), logs: join(root, 'logs'), lib: join(cache, 'lib') };
}

/**
 * Creates a directory (and parents) and returns its path.
 * @param {string} path
 */
export function ensureDir(path) {
  mkdirSync(path, { recursive: true });
  return path;
}
