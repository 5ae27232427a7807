import { Redis } from 'ioredis';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import { type ContenderSetup, RETENTION, type RedisContender } from './types.js';

/**
 * The hand-written floor: what a careful developer writes with ioredis alone.
 *
 * Per processed message: `SET key 1 NX PX lease` (claim), handler, `SET key done PX ttl`
 * (complete). Per duplicate: the `SET NX` that fails. No fencing, no fingerprint, no failure
 * state, no lease renewal: it cannot tell a duplicate from a message still in progress.
 */
export async function baselineContender(setup: ContenderSetup): Promise<RedisContender> {
  const sent = new CommandCounter();
  const client = countIoredis(new Redis(setup.redisUrl, { maxRetriesPerRequest: 1 }), sent);
  await client.ping();

  return {
    store: 'redis',
    sent,
    keyPatterns: [`${globEscape(setup.namespace)}:*`],
    async handle(message) {
      const ran = await setNxGuarded(client, message.requestId, setup.handler);
      return ran ? 'processed' : 'duplicate';
    },
    async close() {
      await client.quit();
    },
  };
}

/**
 * The hand-written idempotency around one message: `SET key 1 NX PX lease`, `handler`, then
 * `SET key done PX ttl`. False, without running `handler`, when the key was set before. Shared
 * by the store benchmark's baseline and the consumer benchmark's hand-written consumer.
 */
export async function setNxGuarded(
  client: Redis,
  key: string,
  handler: () => Promise<void> | void,
): Promise<boolean> {
  if ((await client.set(key, '1', 'PX', RETENTION.leaseMs, 'NX')) !== 'OK') return false;
  // Awaited only when it is async: an await of a plain call would add a turn to the baseline.
  const running = handler();
  if (running) await running;
  await client.set(key, 'done', 'PX', RETENTION.completedTtlMs);
  return true;
}
