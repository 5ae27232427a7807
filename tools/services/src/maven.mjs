// @ts-check
// Broker jars from Maven Central: `mvn dependency:copy-dependencies` on a POM in tools/brokers,
// into <cache>/lib/<id>-<hash>/ (see paths.mjs). Only the first run on a machine downloads (Maven
// keeps ~/.m2); a lib dir, once complete, is reused by every checkout until its POM changes.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';
import { formatBlock, tailFile } from './logTail.mjs';
import { ensureDir } from './paths.mjs';

/** Pinned so that Maven never asks Central which plugin version is newest. 3.8.1 runs on Maven >= 3.6.3. */
export const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

const COMPLETE_MARKER = '.complete';

/** @type {Promise<unknown>} one mvn at a time: parallel runs can trip over the same ~/.m2 files */
let queue = Promise.resolve();

/**
 * @typedef {object} RuntimeSpec
 * @property {string} service
 * @property {string} id                   lib dir name, e.g. "kafka-3.9.1"
 * @property {string} pom                  POM whose runtime dependencies are the classpath
 * @property {Record<string, string>} properties  -D overrides, e.g. { 'kafka.version': '3.9.1' }
 * @property {import('./paths.mjs').ServiceDirs} dirs
 * @property {(message: string) => void} log
 */

/**
 * Directory holding every runtime jar of the POM (use as `-cp '<dir>/*'`).
 * @param {RuntimeSpec} spec
 * @returns {Promise<string>}
 */
export function resolveRuntime(spec) {
  const result = queue.then(() => copyDependencies(spec));
  queue = result.catch(() => undefined);
  return result;
}

/**
 * @param {RuntimeSpec} spec
 * @returns {Promise<string>}
 */
async function copyDependencies(spec) {
  // The POM's content and the -D values key the dir: editing the POM resolves afresh.
  const key = createHash('sha256')
    .update(readFileSync(spec.pom))
    .update(JSON.stringify(spec.properties))
    .digest('hex')
    .slice(0, 10);
  const libDir = join(ensureDir(spec.dirs.lib), `${spec.id}-${key}`);
  if (existsSync(join(libDir, COMPLETE_MARKER))) return libDir;
  const mvn = which('mvn');
  if (!mvn) {
    throw new ServiceError(
      spec.service,
      `${spec.service} jars come from Maven Central, and mvn was not found`,
      {
        hint: 'install Maven, e.g. `apt-get install -y --no-install-recommends maven`, or run the brokers with `docker compose up -d --wait`',
      },
    );
  }
  const logFile = join(ensureDir(spec.dirs.logs), 'maven.log');
  // Per-process temp dir: another checkout may be resolving the same POM right now.
  const partial = `${libDir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  spec.log(`${spec.service}: resolving ${spec.id} jars with Maven (cached after the first run)...`);
  const started = Date.now();
  const { code } = await run(
    mvn,
    [
      '-B',
      '-ntp',
      '-f',
      spec.pom,
      ...Object.entries(spec.properties).map(([key, value]) => `-D${key}=${value}`),
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${partial}`,
    ],
    { logFile, timeoutMs: 15 * 60_000 },
  );
  if (code !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new ServiceError(
      spec.service,
      `mvn could not resolve ${spec.id} (exit ${code})\n${formatBlock(`  last lines of ${logFile}:`, tailFile(logFile, 25))}`,
      {
        hint: 'Maven Central must be reachable (or the jars already in ~/.m2); check proxy/mirror settings in ~/.m2/settings.xml',
      },
    );
  }
  writeFileSync(join(partial, COMPLETE_MARKER), `${new Date().toISOString()}\n`);
  if (existsSync(join(libDir, COMPLETE_MARKER))) {
    rmSync(partial, { recursive: true, force: true }); // someone else finished first
  } else {
    rmSync(libDir, { recursive: true, force: true });
    renameSync(partial, libDir);
  }
  spec.log(`${spec.service}: jars ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return libDir;
}
