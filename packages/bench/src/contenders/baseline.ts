import { Redis } from 'ioredis';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import { type Contender, type ContenderSetup, RETENTION } from './types.js';

/**
 * The hand-written floor: what a careful developer writes with ioredis alone.
 *
 * Per processed message: `SET key 1 NX PX lease` (claim), handler, `SET key done PX ttl`
 * (complete). Per duplicate: the `SET NX` that fails. No fencing, no fingerprint, no failure
 * state, no lease renewal: it cannot tell a duplicate from a message still in progress.
 */
export async function baselineContender(setup: ContenderSetup): Promise<Contender> {
  const sent = new CommandCounter();
  const client = countIoredis(new Redis(setup.redisUrl, { maxRetriesPerRequest: 1 }), sent);
  await client.ping();

  return {
    sent,
    keyPatterns: [`${globEscape(setup.namespace)}:*`],
    async handle(message) {
      const key = message.requestId;
      const claimed = await client.set(key, '1', 'PX', RETENTION.leaseMs, 'NX');
      if (claimed !== 'OK') return 'duplicate';
      setup.handler();
      await client.set(key, 'done', 'PX', RETENTION.completedTtlMs);
      return 'processed';
    },
    async close() {
      await client.quit();
    },
  };
}
