import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import { type ContenderSetup, RETENTION, type RedisContender } from './types.js';

/**
 * The claim of the fenced floor: state, lease, fingerprint and fencing token in one hash, timed
 * by the server. ARGV: owner token, fingerprint, lease ms, record TTL ms.
 */
const CLAIM = `
local h = redis.call('HMGET', KEYS[1], 's', 'l', 'p', 'f', 'a')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if h[3] and h[3] ~= ARGV[2] then return 'key-reuse' end
if h[1] == 'C' then return 'duplicate' end
if h[1] == 'I' and tonumber(h[2]) > now then return 'in-progress' end
local fence = math.max((tonumber(h[4]) or 0) + 1, t[1] * 1000000 + t[2])
redis.call('HSET', KEYS[1], 's', 'I', 'o', ARGV[1], 'l', now + tonumber(ARGV[3]),
  'f', string.format('%.0f', fence), 'a', (tonumber(h[5]) or 0) + 1, 'p', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 'claimed'
`;

/** The completion of the fenced floor: only the owner's token completes. ARGV: token, TTL ms. */
const COMPLETE = `
local h = redis.call('HMGET', KEYS[1], 's', 'o')
if h[1] ~= 'I' or h[2] ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('HDEL', KEYS[1], 'o', 'l')
redis.call('HSET', KEYS[1], 's', 'C', 'c', t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

type FencedClient = Redis & {
  fencedClaim(
    key: string,
    token: string,
    fp: string,
    leaseMs: number,
    ttlMs: number,
  ): Promise<string>;
  fencedComplete(key: string, token: string, ttlMs: number): Promise<number>;
};

/**
 * The hand-written floor with idemq's guarantees: what a careful developer writes as two Lua
 * scripts, one call per operation (no batching, no engine). A claim tells a duplicate from a
 * message in progress and from a reused key (payload fingerprint), takes over a lapsed lease,
 * and fences the owner with a server-timed token; a completion is refused to anyone but the
 * owner. What it leaves out: lease renewal, failure records, stored results.
 *
 * Per processed message: EVALSHA claim, handler, EVALSHA complete. Per duplicate: EVALSHA claim.
 */
export async function fencedLuaContender(setup: ContenderSetup): Promise<RedisContender> {
  const sent = new CommandCounter();
  const client = countIoredis(
    new Redis(setup.redisUrl, { maxRetriesPerRequest: 1 }),
    sent,
  ) as FencedClient;
  client.defineCommand('fencedClaim', { numberOfKeys: 1, lua: CLAIM });
  client.defineCommand('fencedComplete', { numberOfKeys: 1, lua: COMPLETE });
  const prefix = `${setup.namespace}:fenced`;
  const recordTtlMs = RETENTION.leaseMs + RETENTION.completedTtlMs;
  await client.ping();

  return {
    store: 'redis',
    sent,
    keyPatterns: [`${globEscape(prefix)}:*`],
    async handle(message) {
      const key = `${prefix}:${message.requestId}`;
      const token = randomUUID();
      const fingerprint = createHash('sha256').update(message.body).digest('base64url');
      const claimed = await client.fencedClaim(
        key,
        token,
        fingerprint,
        RETENTION.leaseMs,
        recordTtlMs,
      );
      if (claimed === 'duplicate' || claimed === 'in-progress') return claimed;
      if (claimed !== 'claimed') throw new Error(`fenced claim answered ${claimed}`);
      setup.handler();
      if ((await client.fencedComplete(key, token, RETENTION.completedTtlMs)) !== 1) {
        throw new Error(`lost the lease of ${message.requestId}`);
      }
      return 'processed';
    },
    async close() {
      await client.quit();
    },
  };
}
