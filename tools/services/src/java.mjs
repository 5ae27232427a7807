// @ts-check
// Finding a Java runtime new enough for the brokers.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';

const INSTALL_HINT =
  'install a Java 17 runtime, e.g. `apt-get install -y --no-install-recommends openjdk-17-jre-headless` ' +
  '(or set JAVA_HOME), or run the brokers with `docker compose up -d --wait`';

/** @type {Map<string, number>} */
const majorByPath = new Map();

/** $JAVA_HOME/bin/java when set, else java on PATH. */
export function findJava() {
  const home = process.env.JAVA_HOME;
  if (home && existsSync(join(home, 'bin', 'java'))) return join(home, 'bin', 'java');
  return which('java');
}

/**
 * Major version from `java -version` ("17.0.15" -> 17, "1.8.0_392" -> 8).
 * @param {string} java
 */
async function majorVersion(java) {
  const known = majorByPath.get(java);
  if (known !== undefined) return known;
  const { output } = await run(java, ['-version']);
  const match = /version "(\d+)(?:\.(\d+))?/.exec(output);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : 0;
  majorByPath.set(java, major);
  return major;
}

/**
 * Path of a java executable of at least `minMajor`, or a ServiceError saying what to install.
 * @param {string} service
 * @param {number} minMajor
 */
export async function requireJava(service, minMajor) {
  const java = findJava();
  if (!java)
    throw new ServiceError(service, `${service} needs Java, and none was found`, {
      hint: INSTALL_HINT,
    });
  const major = await majorVersion(java);
  if (major < minMajor) {
    throw new ServiceError(
      service,
      `${service} needs Java ${minMajor}+, but ${java} is Java ${major}`,
      {
        hint: INSTALL_HINT,
      },
    );
  }
  return java;
}
