import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import { Cluster, Redis } from 'ioredis';

export const urls = serviceUrls();

/** A unique key prefix per test, so tests never see each other's records. */
export const uniquePrefix = () => `t${randomUUID().slice(0, 8)}`;

export function clusterClient(): Cluster {
  const cluster = new Cluster(urls.redisClusterNodes, {
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  cluster.on('error', () => {});
  return cluster;
}

export function standaloneClient(): Redis {
  return new Redis(urls.redis, { maxRetriesPerRequest: 1 });
}

/** Sum of EVALSHA + EVAL calls in INFO commandstats of one server. */
export async function scriptCommandCount(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  let total = 0;
  for (const match of stats.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g))
    total += Number(match[2]);
  return total;
}
