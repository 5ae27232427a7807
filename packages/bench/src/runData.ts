import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type pg from 'pg';
import type { BenchOptions } from './bench.js';
import { STORE } from './contenders/index.js';
import { tableFor } from './contenders/postgresPool.js';
import { connectPostgres, dropTables } from './postgresInfo.js';
import { deleteKeys, globEscape } from './redisInfo.js';

/** A fresh namespace for one bench run: nothing else on a shared server lives under it. */
export function benchNamespace(): string {
  return `idemq-bench:${randomBytes(4).toString('hex')}`;
}

/** SCAN patterns for every key a run under `namespace` can leave (MQT prepends its own prefix). */
export function namespacePatterns(namespace: string): string[] {
  return [`${globEscape(namespace)}:*`, `*:${globEscape(namespace)}:*`];
}

/** The start of the name of every table a run under `namespace` creates (`tableFor`). */
export function tablePrefix(namespace: string): string {
  return `${tableFor(namespace)}_`;
}

/**
 * Deletes whatever a run under `namespace` left on each server given (a failed round's keys,
 * the ceiling's key, the tables of contenders that never closed). Never rejects.
 */
export async function removeRunData(
  servers: { redis?: Redis | undefined; postgres?: pg.Client | undefined },
  namespace: string,
): Promise<void> {
  if (servers.redis) await deleteKeys(servers.redis, namespacePatterns(namespace)).catch(() => 0);
  if (servers.postgres) await dropTables(servers.postgres, tablePrefix(namespace)).catch(() => 0);
}

/**
 * `removeRunData` on fresh connections to the servers the run's contenders use: for a run
 * interrupted (Ctrl-C) before it could clean up.
 */
export async function removeRunDataAt(
  options: Pick<BenchOptions, 'redisUrl' | 'postgresUrl' | 'contenders'>,
  namespace: string,
): Promise<void> {
  const stores = new Set(options.contenders.map((contender) => STORE[contender]));
  const redis = stores.has('redis')
    ? new Redis(options.redisUrl, { maxRetriesPerRequest: 1 })
    : undefined;
  const postgres = stores.has('postgres')
    ? await connectPostgres(options.postgresUrl).catch(() => undefined)
    : undefined;
  await removeRunData({ redis, postgres }, namespace);
  redis?.disconnect();
  await postgres?.end().catch(() => undefined);
}
