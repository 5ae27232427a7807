// @ts-check
// Our own PostgreSQL processes, for `up` and for tests that crash and restart a private one:
// the binaries (installed from Debian's package when missing and allowed), a fresh cluster from
// initdb, and the postmaster. PostgreSQL refuses to run as root, so as root initdb and postgres
// run as the `postgres` user that the Debian package creates.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { aptInstall, canAptInstall } from './apt.mjs';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';
import { formatBlock, tailFile } from './logTail.mjs';
import { serviceDirs } from './paths.mjs';
import { probePostgres } from './probes/postgres.mjs';
import { waitUntilReady } from './readiness.mjs';
import { freePort } from './tcpProxy.mjs';

export const POSTGRES_INSTALL_HINT =
  'install PostgreSQL: `sudo apt-get install -y postgresql` (Debian/Ubuntu) or `brew install postgresql` (macOS); ' +
  'or run `docker compose up -d --wait postgres`; or set POSTGRES_URL to a running PostgreSQL';

/** The OS user that runs PostgreSQL when we are root (Debian's package creates it). */
const SERVICE_USER = 'postgres';
const DEBIAN_LIB = '/usr/lib/postgresql';

/**
 * @typedef {object} PostgresBinaries
 * @property {string} postgres
 * @property {string} initdb
 */

/**
 * @typedef {object} Owner  the user that runs initdb and postgres (only when we are root)
 * @property {number} uid
 * @property {number} gid
 */

/** @param {string} path */
function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * postgres and initdb: Debian keeps them out of PATH in /usr/lib/postgresql/<major>/bin (the
 * highest major wins); elsewhere (Homebrew, other distributions) they are on PATH.
 * @returns {PostgresBinaries | null}
 */
export function findPostgresBinaries() {
  /** @type {number[]} */
  let majors = [];
  try {
    majors = readdirSync(DEBIAN_LIB)
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => b - a);
  } catch {
    // not Debian's layout
  }
  for (const major of majors) {
    const bin = join(DEBIAN_LIB, String(major), 'bin');
    const binaries = { postgres: join(bin, 'postgres'), initdb: join(bin, 'initdb') };
    if (isExecutable(binaries.postgres) && isExecutable(binaries.initdb)) return binaries;
  }
  const postgres = which('postgres');
  const initdb = which('initdb');
  return postgres && initdb ? { postgres, initdb } : null;
}

/**
 * @typedef {object} InstallContext
 * @property {import('./paths.mjs').ServiceDirs} dirs
 * @property {(message: string) => void} log
 * @property {boolean} allowInstall
 */

/**
 * The binaries, installing Debian's `postgresql` first when they are missing and we may.
 * @param {InstallContext} ctx
 * @returns {Promise<PostgresBinaries>}
 */
export async function requirePostgresBinaries(ctx) {
  if (!findPostgresBinaries() && ctx.allowInstall && canAptInstall()) {
    await installPackage(ctx);
  }
  const binaries = findPostgresBinaries();
  if (!binaries) {
    throw new ServiceError(
      'postgres',
      `postgres and initdb not found (looked in ${DEBIAN_LIB}/<major>/bin and on PATH), and PostgreSQL is not running`,
      { hint: POSTGRES_INSTALL_HINT },
    );
  }
  return binaries;
}

/**
 * apt-get install postgresql. Its postinst creates a cluster "main" (and starts it where services
 * may start) on 5432 that asks TCP clients for a password; a main cluster that this install
 * created is dropped again, so that our own can take the port. An existing one is left alone.
 * @param {InstallContext} ctx
 */
async function installPackage(ctx) {
  const clustersBefore = mainClusters();
  const installed = () => findPostgresBinaries() !== null;
  await aptInstall('postgres', ['postgresql'], installed, ctx.dirs, ctx.log);
  const dropCluster = which('pg_dropcluster');
  for (const major of mainClusters()) {
    if (clustersBefore.includes(major) || !dropCluster) continue;
    ctx.log(`postgres: dropping the cluster ${major}/main that the package install just created`);
    await run(dropCluster, ['--stop', major, 'main'], {
      logFile: join(ctx.dirs.logs, 'apt.log'),
      timeoutMs: 60_000,
    });
  }
}

/** Majors with a Debian cluster named "main" (/etc/postgresql/<major>/main). */
function mainClusters() {
  try {
    return readdirSync('/etc/postgresql').filter((major) =>
      existsSync(join('/etc/postgresql', major, 'main', 'postgresql.conf')),
    );
  } catch {
    return [];
  }
}

/**
 * The user to run PostgreSQL as: none (ourselves) unless we are root.
 * @returns {Owner | undefined}
 */
export function postgresOwner() {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (/** @type {string} */ flag) =>
      Number(execFileSync('id', [flag, SERVICE_USER], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new ServiceError(
      'postgres',
      `PostgreSQL refuses to run as root, and there is no "${SERVICE_USER}" user to run it as`,
      {
        hint: `install Debian's postgresql package (it creates the user), or \`useradd --system ${SERVICE_USER}\`, or run as an unprivileged user`,
      },
    );
  }
}

/**
 * Creates dir (and parents) owned by `owner`, and tells whether `owner` can reach and write it
 * (a checkout under /root is out of reach of the postgres user).
 * @param {string} dir
 * @param {Owner | undefined} owner
 */
export function prepareOwnedDir(dir, owner) {
  mkdirSync(dir, { recursive: true });
  if (!owner) return true;
  chownSync(dir, owner.uid, owner.gid);
  return (
    spawnSync('test', ['-w', dir, '-a', '-x', dir], { ...owner, stdio: 'ignore' }).status === 0
  );
}

/**
 * A fresh cluster in dataDir (which must be empty or absent): trust authentication for the
 * superuser "postgres", UTF-8 with the C locale (the same on every machine), no fsync of the
 * files written (they are thrown away or checkpointed on the first start).
 * @param {{ binaries: PostgresBinaries, dataDir: string, owner: Owner | undefined, logFile: string }} spec
 */
export async function initCluster(spec) {
  const { code } = await run(
    spec.binaries.initdb,
    ['-D', spec.dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
    // cwd: the owner may not be able to enter ours (initdb warns, then works; quieter this way)
    { cwd: '/', logFile: spec.logFile, timeoutMs: 120_000, ...spec.owner },
  );
  if (code !== 0) {
    throw new ServiceError(
      'postgres',
      `initdb failed (exit ${code})\n${formatBlock(`  last lines of ${spec.logFile}:`, tailFile(spec.logFile, 20))}`,
    );
  }
}

/**
 * The postmaster's arguments: loopback only, its own socket dir (the machine's cluster owns
 * /var/run/postgresql), and room for several test processes with connection pools. `-D <dir>`
 * comes first: it is what the pid-file check looks for.
 * @param {{ dataDir: string, port: number, socketDir: string }} spec
 */
export function serverArgs(spec) {
  return [
    '-D',
    spec.dataDir,
    '-p',
    String(spec.port),
    '-k',
    spec.socketDir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_connections=200',
  ];
}

/**
 * A socket dir for the server, or '' (TCP only) when the socket's path would be longer than a
 * Unix socket address allows (107 bytes on Linux, 103 on macOS).
 * @param {string} dir
 * @param {number} port
 */
export function socketDirFor(dir, port) {
  return Buffer.byteLength(join(dir, `.s.PGSQL.${port}`)) <= 100 ? dir : '';
}

/** @type {Map<string, string>} */
const versions = new Map();

/**
 * e.g. "PostgreSQL 15.14", from `postgres --version`.
 * @param {PostgresBinaries} binaries
 */
export async function postgresVersion(binaries) {
  const known = versions.get(binaries.postgres);
  if (known) return known;
  const { output } = await run(binaries.postgres, ['--version']);
  const version = `PostgreSQL ${/\(PostgreSQL\)\s+(\S+)/.exec(output)?.[1] ?? '?'}`;
  versions.set(binaries.postgres, version);
  return version;
}

/**
 * @typedef {object} PostgresServerOptions
 * @property {number} [port]     default: a free port
 * @property {string} [dataDir]  default: a new temporary dir, removed by stop(); an existing
 *   cluster (it has PG_VERSION) is started as it is, else initdb makes one
 */

/**
 * @typedef {object} PostgresServer
 * @property {number} port
 * @property {string} url         postgres://postgres@127.0.0.1:<port>/postgres (trust: no password)
 * @property {string} dataDir
 * @property {string} logFile     the server's output, <dataDir>/log/postgres.log
 * @property {number | undefined} pid  the postmaster's pid while it runs
 * @property {(signal?: NodeJS.Signals) => Promise<void>} kill
 *   sends `signal` (default SIGKILL: a crash; SIGINT: fast shutdown) and waits until it exited
 * @property {() => Promise<void>} restart
 *   fast shutdown if it runs, then start on the same port and data, and wait until it answers
 *   (after a kill that includes crash recovery)
 * @property {() => Promise<void>} stop
 *   fast shutdown; removes the data dir if startPostgresServer created it
 */

/**
 * A private PostgreSQL for tests that kill or restart a server without disturbing the shared one:
 * its own port and data, fsync on (what was committed survives a SIGKILL), started as a child of
 * this process. Resolves once it answers `SELECT 1`.
 * @param {PostgresServerOptions} [options]
 * @returns {Promise<PostgresServer>}
 * @example
 * const server = await startPostgresServer({ port: 55432 });
 * await server.kill(); // SIGKILL, as a crash would
 * await server.restart(); // recovers, answers again
 * await server.stop();
 */
export async function startPostgresServer(options = {}) {
  const binaries = await requirePostgresBinaries({
    dirs: serviceDirs(),
    log: (line) => process.stderr.write(`[services] ${line}\n`),
    allowInstall: process.env.IDEMQ_SERVICES_NO_INSTALL !== '1',
  });
  const owner = postgresOwner();
  const port = options.port ?? (await freePort());
  const ownsDir = options.dataDir === undefined;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'idemq-postgres-')));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const logFile = join(dataDir, 'log', 'postgres.log');

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    if (!prepareOwnedDir(dataDir, owner)) {
      throw new ServiceError('postgres', `the ${SERVICE_USER} user cannot write ${dataDir}`, {
        hint: 'pass a dataDir that it can reach, e.g. under /tmp',
      });
    }
    const initLog = join(tmpdir(), `idemq-postgres-initdb-${port}.log`);
    try {
      await initCluster({ binaries, dataDir, owner, logFile: initLog });
    } finally {
      rmSync(initLog, { force: true });
    }
  }
  mkdirSync(join(dataDir, 'log'), { recursive: true });

  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  const isUp = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  /** @param {NodeJS.Signals} signal */
  const kill = async (signal) => {
    const running = child;
    if (!running || !isUp()) return;
    const exited = new Promise((done) => running.once('exit', done));
    running.kill(signal);
    // A smart shutdown (SIGTERM) waits for clients to leave; do not hang a test on one that stays.
    const timer = setTimeout(() => running.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };

  const start = async () => {
    // After a SIGKILL the old server processes notice within moments that their postmaster is
    // gone; until they have exited, a new postmaster refuses the data dir. Try again meanwhile.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const from = existsSync(logFile) ? statSync(logFile).size : 0;
      const fd = openSync(logFile, 'a');
      writeSync(fd, `\n=== ${new Date().toISOString()} starting on port ${port}\n`);
      const started = spawn(
        binaries.postgres,
        serverArgs({ dataDir, port, socketDir: socketDirFor(dataDir, port) }),
        { cwd: '/', stdio: ['ignore', fd, fd], ...owner },
      );
      closeSync(fd);
      started.on('error', () => {});
      child = started;
      try {
        await waitUntilReady({
          service: 'postgres',
          address: url,
          probe: () => probePostgres(url),
          timeoutMs: 60_000,
          intervalMs: 100,
          isAlive: () => started.exitCode === null && started.signalCode === null,
          logFile,
        });
        return;
      } catch (error) {
        if (isUp()) {
          await kill('SIGKILL');
          throw error;
        }
        const output = readFileSync(logFile).subarray(from).toString('utf8');
        const stale = /pre-existing shared memory block|lock file .* already exists/.test(output);
        if (!stale || Date.now() > deadline) throw error;
        await new Promise((done) => setTimeout(done, 200));
      }
    }
  };

  try {
    await start();
  } catch (error) {
    if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url,
    dataDir,
    logFile,
    get pid() {
      return isUp() ? child?.pid : undefined;
    },
    kill: (signal = 'SIGKILL') => kill(signal),
    async restart() {
      await kill('SIGINT');
      await start();
    },
    async stop() {
      await kill('SIGINT');
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
