import type { Logger } from '@idemq/core';
import type { RedisClient } from './scriptRunner.js';

/**
 * Warns about a Sentinel client that does not follow failovers promptly. Without ioredis's
 * `failoverDetector` the client stays on the old primary after Sentinel promoted a replica,
 * until Sentinel disconnects it when it demotes that primary, and Redis drops every write the old
 * primary took meanwhile (the redis README, "Sentinel and failover", has the timings).
 */
export function warnOnSentinelWithoutFailoverDetector(client: RedisClient, logger: Logger): void {
  if ('nodes' in client) return;
  const { sentinels, failoverDetector } = client.options;
  if (!sentinels?.length || failoverDetector) return;
  logger.warn(
    { option: 'failoverDetector' },
    'redisStore: this Sentinel client has no failoverDetector; after a failover it keeps writing ' +
      'to the old primary until Sentinel disconnects it, and Redis drops what it wrote there. ' +
      'Pass `failoverDetector: true` to ioredis, and `durability` with every replica to keep ' +
      'acknowledged records.',
  );
}
