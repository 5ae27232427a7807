import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@idemq/services';
import { Redis } from 'ioredis';
import { until } from './helpers.js';
import { endProcess, waitForPing } from './redisProcess.js';

/** A private Redis Sentinel watching one primary, for failover tests. */
export interface SentinelProcess {
  readonly port: number;
  /** The address Sentinel currently gives for the primary: its port. */
  primaryPort(): Promise<number>;
  /** Resolves once Sentinel knows the replica on `replicaPort` as a healthy candidate. */
  waitForReplica(replicaPort: number): Promise<void>;
  /** Promotes a replica now (`SENTINEL FAILOVER`), without waiting for a failure. */
  failover(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * `redis-server <conf> --sentinel` with a quorum of one. Sentinel rewrites its configuration
 * file, so it lives in a directory of its own.
 */
export async function sentinelProcess(name: string, primaryPort: number): Promise<SentinelProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'idemq-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  await waitForPing(port);
  const admin = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  admin.on('error', () => {});
  return {
    port,
    async primaryPort() {
      const address = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
      return Number(address[1]);
    },
    async waitForReplica(replicaPort) {
      await until(
        `Sentinel to see the replica on ${replicaPort}`,
        async () => {
          const replicas = (await admin.call('SENTINEL', 'REPLICAS', name)) as string[][];
          return replicas.some((fields) => {
            const info = new Map<string, string>();
            for (let f = 0; f + 1 < fields.length; f += 2)
              info.set(fields[f] as string, fields[f + 1] as string);
            return (
              info.get('port') === String(replicaPort) &&
              info.get('flags') === 'slave' &&
              info.get('master-link-status') === 'ok'
            );
          });
        },
        20_000,
      );
    },
    async failover() {
      await admin.call('SENTINEL', 'FAILOVER', name);
    },
    async destroy() {
      admin.disconnect();
      await endProcess(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
