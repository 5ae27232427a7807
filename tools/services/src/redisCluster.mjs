// @ts-check
// A local Redis Cluster: three masters (default 127.0.0.1:7001-7003, no replicas), each its own
// redis-server with its data under .services/redis-cluster/<port>, joined with
// `redis-cli --cluster create`. Recreated from scratch whenever it is not whole.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from './errors.mjs';
import { run } from './exec.mjs';
import { answers, stopManaged } from './lifecycle.mjs';
import { formatBlock, tailFile } from './logTail.mjs';
import { ensureDir } from './paths.mjs';
import { isRunning, readPidFile, removePidFile } from './pidfile.mjs';
import { probeClusterNode, probeRedis } from './probes/redis.mjs';
import { isPortOpen } from './probes/socket.mjs';
import { waitUntilReady } from './readiness.mjs';
import { requireRedisBinaries, spawnRedisServer } from './redisServer.mjs';
import { statusOf } from './status.mjs';
import { describeAddress, isExternal } from './urls.mjs';

/** @param {number} port */
const nodeId = (port) => `redis-cluster-${port}`;

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  const nodes = ctx.urls.redisClusterNodes;
  return {
    service: /** @type {const} */ ('redis-cluster'),
    nodes,
    ids: nodes.map(({ port }) => nodeId(port)),
    address: describeAddress('redis-cluster', ctx.urls),
    probe: () => Promise.all(nodes.map(({ host, port }) => probeClusterNode(host, port))),
  };
}

/** @param {import('./lifecycle.mjs').Context} ctx */
async function stopNodes(ctx) {
  const outcomes = [];
  for (const id of spec(ctx).ids) {
    const outcome = await stopManaged(ctx, id, 10_000);
    if (outcome) outcomes.push(outcome);
  }
  return outcomes;
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const redisClusterDriver = {
  name: 'redis-cluster',
  async ensure(ctx) {
    const began = Date.now();
    const { service, nodes, ids, address, probe } = spec(ctx);
    /** @param {import('./lifecycle.mjs').EnsureOutcome['outcome']} outcome @param {string} detail */
    const done = (outcome, detail) => ({
      service,
      address,
      outcome,
      ms: Date.now() - began,
      detail,
    });

    if (isExternal(service)) {
      await waitUntilReady({
        service,
        address,
        probe,
        timeoutMs: Math.min(ctx.timeoutMs, 30_000),
        hint: 'REDIS_CLUSTER_NODES points there, so nothing is started here: start that cluster or unset REDIS_CLUSTER_NODES',
      });
      return done('external', 'REDIS_CLUSTER_NODES is set');
    }

    const records = ids.map((id) => readPidFile(ctx.dirs.run, id));
    const ours = records.filter((record) => record !== null && isRunning(record));
    if (ours.length === nodes.length && (await answers(probe))) {
      return done('already-running', `pids ${ours.map((record) => record?.pid).join(', ')}`);
    }
    if (ours.length === 0 && (await answers(probe))) {
      return done('already-running', 'not started by services.mjs');
    }
    // Partly there (a node died, or an earlier create failed): start over.
    if (records.some((record) => record !== null)) await stopNodes(ctx);
    for (const id of ids) removePidFile(ctx.dirs.run, id);
    for (const { host, port } of nodes) {
      for (const busy of [port, port + 10000]) {
        if (await isPortOpen(host, busy)) {
          throw new ServiceError(
            service,
            `port ${host}:${busy} is in use, but not by our cluster`,
            {
              hint: `free ports ${port} and ${port + 10000} (cluster bus), or set REDIS_CLUSTER_NODES to a running cluster`,
            },
          );
        }
      }
    }

    const { server, cli } = await requireRedisBinaries(ctx, service);
    const logFile = join(ensureDir(ctx.dirs.logs), 'redis-cluster.log');
    const root = join(ctx.dirs.root, 'redis-cluster');
    ctx.log(`redis-cluster: starting ${nodes.length} masters on ${address}...`);
    const started = [];
    for (const { port } of nodes) {
      const dir = join(root, String(port));
      rmSync(dir, { recursive: true, force: true });
      started.push(
        await spawnRedisServer(ctx, {
          id: nodeId(port),
          server,
          port,
          dir: ensureDir(dir),
          logFile,
          extraArgs: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '5000',
          ],
        }),
      );
    }
    for (const [index, { host, port }] of nodes.entries()) {
      const record = started[index];
      await waitUntilReady({
        service,
        address: `${host}:${port}`,
        probe: () => probeRedis(`redis://${host}:${port}`),
        timeoutMs: ctx.timeoutMs,
        isAlive: () => record !== undefined && isRunning(record),
        logFile,
      });
    }

    const create = await run(
      cli,
      [
        '--cluster',
        'create',
        ...nodes.map(({ host, port }) => `${host}:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { logFile, timeoutMs: 60_000 },
    );
    if (create.code !== 0) {
      await stopNodes(ctx);
      throw new ServiceError(
        service,
        `redis-cli --cluster create failed (exit ${create.code})\n${formatBlock(`  last lines of ${logFile}:`, tailFile(logFile, 25))}`,
      );
    }
    await waitUntilReady({ service, address, probe, timeoutMs: ctx.timeoutMs, logFile });
    return done('started', `pids ${started.map((record) => record.pid).join(', ')}`);
  },
  stop: stopNodes,
  status(ctx) {
    const { service, address, probe, ids } = spec(ctx);
    return statusOf(ctx, { service, address, probe, ids });
  },
};
