// @ts-check
// PostgreSQL: use the one that answers (the machine's cluster, a container); else start our own
// postmaster on 127.0.0.1:5432 (or $POSTGRES_PORT) with a fresh cluster in .services/postgres,
// installing Debian's package first when missing (as root).
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDaemon } from './daemon.mjs';
import { ensureManaged, stopManaged } from './lifecycle.mjs';
import { ensureDir } from './paths.mjs';
import { commandLineOf, isRunning, readPidFile, stopRecorded } from './pidfile.mjs';
import {
  initCluster,
  postgresOwner,
  postgresVersion,
  prepareOwnedDir,
  requirePostgresBinaries,
  serverArgs,
  socketDirFor,
} from './postgresServer.mjs';
import { probePostgres } from './probes/postgres.mjs';
import { statusOf } from './status.mjs';
import { isExternal, redactUrl } from './urls.mjs';

const ID = 'postgres';
/** Fast shutdown: ends client sessions, checkpoints, exits. SIGTERM would wait for every client. */
const STOP_SIGNAL = 'SIGINT';

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  const url = new URL(ctx.urls.postgres);
  return {
    service: /** @type {const} */ ('postgres'),
    id: ID,
    address: redactUrl(ctx.urls.postgres),
    probe: () => probePostgres(ctx.urls.postgres),
    port: Number(url.port || 5432),
  };
}

/**
 * Where our cluster lives: .services/postgres, owned by the user that runs it. As root, when the
 * postgres user cannot reach that dir (a checkout under /root), a dir under the system temp dir,
 * named after the .services dir so that every checkout keeps its own.
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {import('./postgresServer.mjs').Owner | undefined} owner
 */
function freshHome(ctx, owner) {
  const preferred = join(ctx.dirs.root, 'postgres');
  rmSync(preferred, { recursive: true, force: true });
  if (prepareOwnedDir(preferred, owner)) return preferred;
  rmSync(preferred, { recursive: true, force: true });
  const hash = createHash('sha256').update(ctx.dirs.root).digest('hex').slice(0, 12);
  const fallback = join(tmpdir(), `idemq-services-postgres-${hash}`);
  ctx.log(`postgres: the postgres user cannot reach ${preferred}; its data goes to ${fallback}`);
  rmSync(fallback, { recursive: true, force: true });
  if (!prepareOwnedDir(fallback, owner)) {
    throw new Error(`the postgres user cannot reach ${preferred} nor ${fallback}`);
  }
  return fallback;
}

/**
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {number} port
 */
async function startPostgres(ctx, port) {
  const binaries = await requirePostgresBinaries(ctx);
  const owner = postgresOwner();
  const home = freshHome(ctx, owner);
  const dataDir = join(home, 'data');
  const socketDir = join(home, 'socket');
  prepareOwnedDir(socketDir, owner);
  const logFile = join(ensureDir(ctx.dirs.logs), 'postgres.log');
  await initCluster({ binaries, dataDir, owner, logFile });
  const version = await postgresVersion(binaries);
  ctx.log(`postgres: starting ${version} on 127.0.0.1:${port}...`);
  const record = spawnDaemon({
    id: ID,
    command: binaries.postgres,
    args: serverArgs({ dataDir, port, socketDir: socketDirFor(socketDir, port) }),
    // the data dir (unique to this .services/ dir) marks the process as ours
    marker: `-D ${dataDir} `,
    logFile,
    runDir: ctx.dirs.run,
    cwd: home,
    version,
    ...owner,
  });
  return {
    isAlive: () => isRunning(record),
    logFile,
    detail: `pid ${record.pid}, ${version}`,
  };
}

/**
 * Ours runs, but on another port than asked for now (POSTGRES_PORT changed): stop it, so that
 * it neither lingers unrecorded nor holds the data dir that the new one will use.
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {number} port
 */
async function stopIfMoved(ctx, port) {
  const record = readPidFile(ctx.dirs.run, ID);
  if (!record || !isRunning(record)) return;
  const args = (commandLineOf(record.pid) ?? '').split(' ');
  if (args[args.indexOf('-p') + 1] === String(port)) return;
  ctx.log(`postgres: ours (pid ${record.pid}) runs on another port; stopping it`);
  await stopRecorded(ctx.dirs.run, record, 30_000, STOP_SIGNAL);
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const postgresDriver = {
  name: 'postgres',
  async ensure(ctx) {
    const base = spec(ctx);
    if (!isExternal('postgres')) await stopIfMoved(ctx, base.port);
    return ensureManaged(ctx, {
      ...base,
      ports: [{ host: '127.0.0.1', port: base.port }],
      start: () => startPostgres(ctx, base.port),
    });
  },
  async stop(ctx) {
    const outcome = await stopManaged(ctx, ID, 30_000, STOP_SIGNAL);
    return outcome ? [outcome] : [];
  },
  status(ctx) {
    return statusOf(ctx, { ...spec(ctx), ids: [ID] });
  },
};
