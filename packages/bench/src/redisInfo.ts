import type { Redis } from 'ioredis';
import type { CommandCounts } from './commandCounter.js';

/**
 * `INFO commandstats` as counts by command name. Redis counts the commands a Lua script runs
 * inside the server here too, so these are the server's commands, not round trips.
 */
export async function commandStats(client: Redis): Promise<CommandCounts> {
  const text = await client.info('commandstats');
  const byName: Record<string, number> = {};
  let total = 0;
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1] as string;
    // Our own INFO calls are the measuring instrument, not the workload.
    if (name === 'info') continue;
    const calls = Number(match[2]);
    byName[name] = calls;
    total += calls;
  }
  return { total, byName };
}

/** Version, mode and persistence of the server, for the report. */
export async function serverFacts(
  client: Redis,
): Promise<{ version: string; mode: string; pid?: number }> {
  const text = await client.info('server');
  const pid = Number(/process_id:(\d+)/.exec(text)?.[1]);
  return {
    version: /redis_version:(\S+)/.exec(text)?.[1] ?? 'unknown',
    mode: /redis_mode:(\S+)/.exec(text)?.[1] ?? 'unknown',
    ...(Number.isInteger(pid) && pid > 0 ? { pid } : {}),
  };
}

/** CPU time the Redis server has used since it started (user + system, all its threads), µs. */
export async function serverCpuMicros(client: Redis): Promise<number> {
  const text = await client.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(text)?.[1]);
  return Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
}

/** Bytes the server has allocated (`used_memory`): records' size as the server pays for it. */
export async function usedMemoryBytes(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

/** Deletes every key matching `patterns` (SCAN + UNLINK): the bench never flushes a shared server. */
export async function deleteKeys(client: Redis, patterns: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const pattern of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 2000);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
  }
  return deleted;
}

/** Escapes glob metacharacters so a prefix matches itself only in SCAN MATCH. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
