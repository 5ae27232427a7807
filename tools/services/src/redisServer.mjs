// @ts-check
// Launching redis-server processes of our own (standalone and cluster nodes), installing the
// Debian package first when it is missing and we may.
import { aptInstall, canAptInstall } from './apt.mjs';
import { spawnDaemon } from './daemon.mjs';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';

export const REDIS_INSTALL_HINT =
  'install Redis: `sudo apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS); ' +
  'or run `docker compose up -d --wait redis`; or set REDIS_URL to a running Redis';

/**
 * Paths of redis-server and redis-cli, installing redis-server (which brings redis-tools) with
 * apt when missing and allowed.
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {import('./urls.mjs').ServiceName} service
 */
export async function requireRedisBinaries(ctx, service) {
  const installed = () => which('redis-server') !== null && which('redis-cli') !== null;
  if (!installed() && ctx.allowInstall && canAptInstall()) {
    await aptInstall(service, ['redis-server', 'redis-tools'], installed, ctx.dirs, ctx.log);
  }
  const server = which('redis-server');
  const cli = which('redis-cli');
  if (!server || !cli) {
    const missing = [server ? null : 'redis-server', cli ? null : 'redis-cli'].filter(Boolean);
    throw new ServiceError(
      service,
      `${missing.join(' and ')} not found, and Redis is not running`,
      {
        hint: REDIS_INSTALL_HINT,
      },
    );
  }
  return { server, cli };
}

/** @type {Map<string, boolean>} */
const procTitleSupport = new Map();

/**
 * Redis >= 6.2 rewrites its process title unless told not to; the pid-file check needs the
 * original command line (it holds our --dir), so turn that off where the option exists.
 * @param {string} server
 */
async function supportsSetProcTitle(server) {
  const known = procTitleSupport.get(server);
  if (known !== undefined) return known;
  const { output } = await run(server, ['--version']);
  const [major = 0, minor = 0] = (/v=(\d+)\.(\d+)/.exec(output) ?? []).slice(1).map(Number);
  const supported = major > 6 || (major === 6 && minor >= 2);
  procTitleSupport.set(server, supported);
  return supported;
}

/**
 * @typedef {object} RedisProcessSpec
 * @property {string} id        pid file name
 * @property {string} server    redis-server path
 * @property {number} port
 * @property {string} dir       working dir (unique per process: it is the pid-file marker)
 * @property {string} logFile
 * @property {readonly string[]} [extraArgs]
 */

/**
 * Starts redis-server in the foreground of a detached session: loopback only, nothing on disk
 * (no RDB, no AOF), like the machine's own Redis.
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {RedisProcessSpec} spec
 */
export async function spawnRedisServer(ctx, spec) {
  const args = [
    '--port',
    String(spec.port),
    '--bind',
    '127.0.0.1',
    '--protected-mode',
    'yes',
    '--daemonize',
    'no',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    spec.dir,
    ...(spec.extraArgs ?? []),
  ];
  // Older Redis always retitles itself "redis-server 127.0.0.1:<port>": match that instead.
  let marker = `127.0.0.1:${spec.port}`;
  if (await supportsSetProcTitle(spec.server)) {
    args.push('--set-proc-title', 'no');
    marker = `--dir ${spec.dir}`;
  }
  return spawnDaemon({
    id: spec.id,
    command: spec.server,
    args,
    marker,
    logFile: spec.logFile,
    runDir: ctx.dirs.run,
    cwd: spec.dir,
  });
}
