import { Redis } from 'ioredis';
import { diffCounts } from './commandCounter.js';
import type { RedisContender } from './contenders/index.js';
import { commandStats, deleteKeys, serverCpuMicros, usedMemoryBytes } from './redisInfo.js';
import type { ServerGauge } from './serverGauge.js';

/**
 * The Redis side of a session: `INFO memory / commandstats / cpu` before and after each phase,
 * on a connection of its own, and the contender's keys deleted (SCAN + UNLINK) after a round.
 */
export function redisGauge(redisUrl: string, contender: RedisContender): ServerGauge {
  const info = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  return {
    async around(phase) {
      const memory0 = await usedMemoryBytes(info);
      const commands0 = await commandStats(info);
      const cpu0 = await serverCpuMicros(info);
      const value = await phase();
      const cpu1 = await serverCpuMicros(info);
      const commands1 = await commandStats(info);
      const memory1 = await usedMemoryBytes(info);
      return {
        value,
        server: {
          commands: diffCounts(commands1, commands0),
          cpuMicros: cpu1 - cpu0,
          memoryBytes: memory1 - memory0,
          otherClients: 0,
        },
      };
    },
    clear: () => deleteKeys(info, contender.keyPatterns),
    async close() {
      await info.quit();
    },
  };
}
