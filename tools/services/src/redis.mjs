// @ts-check
// Redis (standalone): use the one that runs; else start our own redis-server on 127.0.0.1:6379
// with its dir under .services/redis; install the Debian package first when missing (as root).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { answers, ensureManaged, stopManaged } from './lifecycle.mjs';
import { ensureDir } from './paths.mjs';
import { isRunning } from './pidfile.mjs';
import { probeRedis } from './probes/redis.mjs';
import { requireRedisBinaries, spawnRedisServer } from './redisServer.mjs';
import { statusOf } from './status.mjs';
import { redactUrl } from './urls.mjs';

const ID = 'redis';

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  const url = new URL(ctx.urls.redis);
  return {
    service: /** @type {const} */ ('redis'),
    id: ID,
    address: redactUrl(ctx.urls.redis),
    probe: () => probeRedis(ctx.urls.redis),
    port: Number(url.port || 6379),
  };
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const redisDriver = {
  name: 'redis',
  async ensure(ctx) {
    const base = spec(ctx);
    return ensureManaged(ctx, {
      ...base,
      ports: [{ host: '127.0.0.1', port: base.port }],
      async start() {
        const { server } = await requireRedisBinaries(ctx, 'redis');
        // A freshly installed package may have started the system Redis already.
        if (await answers(base.probe)) {
          return { isAlive: () => true, detail: 'started by its Debian package' };
        }
        const dir = join(ctx.dirs.root, 'redis');
        rmSync(dir, { recursive: true, force: true });
        const record = await spawnRedisServer(ctx, {
          id: ID,
          server,
          port: base.port,
          dir: ensureDir(dir),
          logFile: join(ensureDir(ctx.dirs.logs), 'redis.log'),
        });
        return {
          isAlive: () => isRunning(record),
          logFile: join(ctx.dirs.logs, 'redis.log'),
          detail: `pid ${record.pid}`,
        };
      },
    });
  },
  async stop(ctx) {
    const outcome = await stopManaged(ctx, ID);
    return outcome ? [outcome] : [];
  },
  status(ctx) {
    return statusOf(ctx, { ...spec(ctx), ids: [ID] });
  },
};
