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

/**
 * Watches the script calls a client sends (EVALSHA and EVAL): the most that were awaiting their
 * reply at once. `stop()` puts the client back as it was.
 */
export function watchScriptCalls(client: Redis): { max(): number; stop(): void } {
  let pending = 0;
  let max = 0;
  const watched = ['evalsha', 'eval'] as const;
  for (const name of watched) {
    const original = client[name].bind(client) as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(client, name, {
      configurable: true,
      value: (...args: unknown[]) => {
        pending += 1;
        max = Math.max(max, pending);
        return original(...args).finally(() => {
          pending -= 1;
        });
      },
    });
  }
  return {
    max: () => max,
    stop: () => {
      for (const name of watched) delete (client as unknown as Record<string, unknown>)[name];
    },
  };
}

/** Polls `check` every 50 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
