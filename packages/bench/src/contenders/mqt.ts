import { AcquireLockTimeoutError } from '@message-queue-toolkit/core';
import { RedisMessageDeduplicationStore } from '@message-queue-toolkit/redis-message-deduplication-store';
import { Redis } from 'ioredis';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import { type ContenderSetup, RETENTION, type RedisContender } from './types.js';

/**
 * message-queue-toolkit's `DEFAULT_MESSAGE_DEDUPLICATION_OPTIONS` (core's
 * `message-deduplication/messageDeduplicationTypes`), with the window set per message through
 * the documented `deduplicationOptions` field to the 24 h every contender keeps.
 */
const DEDUPLICATION_OPTIONS = Object.freeze({
  deduplicationWindowSeconds: RETENTION.completedTtlMs / 1000,
  lockTimeoutSeconds: 20,
  acquireTimeoutSeconds: 20,
  refreshIntervalSeconds: 10,
});

/** The requester prefix message-queue-toolkit's consumers put before every deduplication id. */
const CONSUMER = 'consumer';

/**
 * `@message-queue-toolkit/redis-message-deduplication-store` 3.0.1 (`RedisMessageDeduplicationStore`
 * on an ioredis client), driven with exactly the store calls message-queue-toolkit's consumer
 * makes for one message (`AbstractSqsConsumer.handleMessage` in `@message-queue-toolkit/sqs`, via
 * `AbstractQueueService.isMessageDuplicated / acquireLockForMessage / deduplicateMessage`):
 *
 * 1. `keyExists('consumer:<id>')` (EXISTS): a duplicate stops here.
 * 2. `acquireLock('consumer:<id>', options)`: redis-semaphore `Mutex` → `SET mutex:consumer:<id> <uuid> PX 20000 NX`
 *    (and a 10 s refresh timer); on timeout the message is retried later.
 * 3. `keyExists('consumer:<id>')` again: another consumer may have finished while we waited.
 * 4. handler.
 * 5. `setIfNotExists('consumer:<id>', <ISO date>, window)` (SET EX NX).
 * 6. `lock.release()`: redis-semaphore's delete-if-equal Lua script (EVALSHA; GET + DEL inside).
 */
export async function mqtContender(setup: ContenderSetup): Promise<RedisContender> {
  const sent = new CommandCounter();
  const redis = countIoredis(new Redis(setup.redisUrl, { maxRetriesPerRequest: 1 }), sent);
  await redis.ping();
  const store = new RedisMessageDeduplicationStore({ redis });

  return {
    store: 'redis',
    sent,
    keyPatterns: [
      `${CONSUMER}:${globEscape(setup.namespace)}:*`,
      `mutex:${CONSUMER}:${globEscape(setup.namespace)}:*`,
    ],
    async handle(message) {
      const key = `${CONSUMER}:${message.requestId}`;
      if (await store.keyExists(key)) return 'duplicate';
      const lock = await store.acquireLock(key, DEDUPLICATION_OPTIONS);
      if (lock.error) {
        // The consumer retries a message whose lock it could not get in time; any other lock
        // error it logs and processes anyway (fail-open), which a benchmark must not hide.
        if (lock.error instanceof AcquireLockTimeoutError) return 'in-progress';
        throw lock.error;
      }
      if (await store.keyExists(key)) {
        await lock.result.release();
        return 'duplicate';
      }
      setup.handler();
      await store.setIfNotExists(
        key,
        new Date().toISOString(),
        DEDUPLICATION_OPTIONS.deduplicationWindowSeconds,
      );
      await lock.result.release();
      return 'processed';
    },
    async close() {
      await redis.quit();
    },
  };
}
