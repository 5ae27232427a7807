/*
 * The Lua scripts behind every record transition. Each takes N record keys and a fixed stride
 * of arguments per key, so one call serves a single operation, `claimMany`, or a tick's worth of
 * coalesced operations on one slot. Time comes from the server (`TIME`), never the client.
 * Replies hold one element per key (a string, an integer, or an array of strings), so RESP2 and
 * RESP3 clients agree.
 *
 * Each key's step runs under `pcall`: a Redis error (WRONGTYPE: another kind of value under the
 * key; OOM) or a Lua error (a foreign hash whose fields the step cannot read) in one key's step
 * answers `{'error', text}` for that key alone, and the other keys of the call get their real
 * outcomes. Redis does not roll back a script, so without this an error at key i would leave
 * the writes of keys before i in place while every caller of the call was told it failed. A
 * step reads before it writes, so a step that fails has written nothing.
 *
 * Arguments: first the call's shared ones (the same for every key of the call: TTLs, lease
 * length), then a fixed stride per key (its owner token, …). Operations with the same shared
 * arguments share a call; passing them once rather than per key roughly halves what a call
 * carries, and what the client builds and the server parses for it.
 *
 * Record hash fields: s state, a attempt, f fencing token, o owner token, l lease expiry (ms),
 * r retain after lease (ms), p payload fingerprint, c completed at (ms), v result, ro why no
 * result was stored (`resultOmitted`), en / em / ec last error name / message / code. The
 * record's expiry is the key's own TTL (`PEXPIRE`). States are written as one letter (I, C, F,
 * R) and the fields only an IN_PROGRESS record needs (o, l, r) are dropped when it ends: records
 * are kept for a day, so every byte of one is paid for by each message of that day. Records
 * written before spell their state out (IN_PROGRESS, …); every script reads both.
 *
 * Cost: these run for every message, and in Redis's Lua turning a number into a string (an
 * argument to `redis.call`, `tostring`, `string.format`) costs about as much as a whole `HGET`.
 * So times are built as strings from `TIME`'s own digits, TTLs are the caller's strings passed
 * straight to `PEXPIRE`, only a lease expiry is formatted (`%.0f`: `tostring` turns to exponents
 * past 14 digits), and a claim checks `EXISTS` before reading a record (most ids are new).
 * The measurements behind these choices: docs/performance-history.md.
 */

/**
 * `now`: server epoch ms as a number; `nowMs` and `nowUs`: the same instant in ms and µs as
 * strings, from TIME's digits.
 */
const NOW = `
local t = redis.call('TIME')
local micros = string.rep('0', 6 - #t[2]) .. t[2]
local nowMs = t[1] .. string.sub(micros, 1, 3)
local nowUs = t[1] .. micros
local now = tonumber(nowMs)
`;

/**
 * `stateOf(s)`: a record's state as its one letter, whether it was written as one or spelled out
 * (records written before states were shortened).
 */
const STATE = `
local spelledOut = {IN_PROGRESS = 'I', COMPLETED = 'C', FAILED = 'F', RELEASED = 'R'}
local function stateOf(s)
  return spelledOut[s] or s
end
`;

/** `failed(e)`: the reply element of a key whose step raised `e` (a Redis error is a table). */
const FAILED = `
local function failed(e)
  return {'error', type(e) == 'table' and tostring(e.err) or tostring(e)}
end
`;

/**
 * A fenced transition over N keys, after `shared` shared arguments and `stride` arguments per key
 * (a Lua expression: it may depend on the shared ones): for each key whose IN_PROGRESS record is
 * owned by the token in its first argument, run `body` (which sees `key`, `base` — the key's
 * argument offset —, `now` and `nowMs` unless `clock` is false, and `h`: the fields `s`, `o`,
 * then `extraFields`) and answer 1; answer 0, changing nothing, for every other key (or an error
 * element, see above, when its step raised one). Each server command costs a Lua round trip into
 * Redis, so bodies read what they need in this one HMGET and write with one HSET.
 */
function fencedTransition(
  shared: number,
  stride: string,
  body: string,
  { extraFields = [], clock = true }: { extraFields?: string[]; clock?: boolean } = {},
): string {
  const fields = ['s', 'o', ...extraFields].map((f) => `'${f}'`).join(', ');
  return `${clock ? NOW : ''}${STATE}${FAILED}
local out = {}
local stride = ${stride}
local function step(key, base)
  local h = redis.call('HMGET', key, ${fields})
  if stateOf(h[1]) == 'I' and h[2] == ARGV[base + 1] then
${body}
    return 1
  end
  return 0
end
for i, key in ipairs(KEYS) do
  local ok, answer = pcall(step, key, ${shared} + (i - 1) * stride)
  if ok then out[i] = answer else out[i] = failed(answer) end
end
return out
`;
}

/**
 * Shared ARGV: leaseMs, retainMs, ttlMs (= leaseMs + retainMs, the key's TTL), '1' when the
 * store keeps a local cache (else '0'). Per key: token, fingerprint ('' = none). Reply per key:
 * for the common case, a new id claimed, the server's clock in µs (its fencing token; attempt 1,
 * lease until its ms + leaseMs); else 8 fields {status, …} (a duplicate's 5th is the record's
 * fingerprint, its 6th the `resultOmitted` marker, its 7th the time the record has left in ms
 * when asked, for the local cache), and a 9th on a claim of an existing record: the fingerprint
 * it holds now. One string instead of eight for most keys is less for Lua to build, for Redis to
 * write and for the client to parse.
 */
const CLAIM_SHARED = 4;
const CLAIM_STRIDE = 2;
export const claimScript = `${NOW}${STATE}${FAILED}
local out = {}
local leaseMs, retainMs, ttlMs = tonumber(ARGV[1]), ARGV[2], ARGV[3]
-- The store keeps a local cache: a duplicate says how long its record has left.
local withTtl = ARGV[4] == '1'
local function reply(a, b, c, d, e, f, g, h, fp)
  return {a, b, c, d, e, f, g, h, fp}
end
-- The lease expiry of a claim taken now, formatted once per call.
local leaseUntil = string.format('%.0f', now + leaseMs)
-- Writes an IN_PROGRESS record and its TTL.
local function take(key, base, attempt, fence)
  local token, fp = ARGV[base + 1], ARGV[base + 2]
  if fp ~= '' then
    redis.call('HSET', key, 's', 'I', 'a', attempt, 'f', fence, 'o', token,
      'l', leaseUntil, 'r', retainMs, 'p', fp)
  else
    redis.call('HSET', key, 's', 'I', 'a', attempt, 'f', fence, 'o', token,
      'l', leaseUntil, 'r', retainMs)
  end
  redis.call('PEXPIRE', key, ttlMs)
end
local function claim(key, base)
  if redis.call('EXISTS', key) == 0 then
    -- The common case, a new id: attempt 1, fenced by the server's clock in µs.
    take(key, base, '1', nowUs)
    return nowUs
  end
  local h = redis.call('HMGET', key, 's', 'a', 'f', 'l', 'p', 'c', 'v', 'en', 'em', 'ec', 'ro')
  local state, fp = stateOf(h[1]), ARGV[base + 2]
  if fp ~= '' and h[5] and h[5] ~= fp then
    return reply('key-reuse', '', '', '', '', '', '', '')
  elseif state == 'C' then
    return reply('duplicate', h[6] or '0', h[7] and '1' or '0', h[7] or '', h[5] or '', h[11] or '',
      withTtl and tostring(redis.call('PTTL', key)) or '', '')
  elseif state == 'I' and tonumber(h[4]) > now then
    return reply('in-progress', tostring(tonumber(h[4]) - now), h[2], '', '', '', '', '')
  end
  local attempt = tostring((tonumber(h[2]) or 0) + ((state == 'R') and 0 or 1))
  -- Composite fencing token: above the record's last one, and above any token this record
  -- had before it expired (server microseconds only grow).
  local fence = string.format('%.0f', math.max((tonumber(h[3]) or 0) + 1, tonumber(nowUs)))
  take(key, base, attempt, fence)
  -- A claim without a fingerprint keeps the record's.
  return reply('claimed', fence, attempt, leaseUntil,
    h[8] or '', h[9] or '', h[10] or '', h[8] and '1' or '0', fp ~= '' and fp or h[5] or '')
end
for i, key in ipairs(KEYS) do
  local ok, answer = pcall(claim, key, ${CLAIM_SHARED} + (i - 1) * ${CLAIM_STRIDE})
  if ok then out[i] = answer else out[i] = failed(answer) end
end
return out
`;

/**
 * Shared ARGV: ttlMs, what is stored: '1' a result, '0' nothing, else why no result is stored
 * (a `resultOmitted` marker, kept in `ro`). Per key: token, then its result when '1'.
 * Reply: 1 ok / 0 lease lost.
 */
export const completeScript = fencedTransition(
  2,
  "ARGV[2] == '1' and 2 or 1",
  `    redis.call('HDEL', key, 'o', 'l', 'r', 'en', 'em', 'ec')
    if stride == 2 then
      redis.call('HSET', key, 's', 'C', 'c', nowMs, 'v', ARGV[base + 2])
    elseif ARGV[2] ~= '0' then
      redis.call('HSET', key, 's', 'C', 'c', nowMs, 'ro', ARGV[2])
    else
      redis.call('HSET', key, 's', 'C', 'c', nowMs)
    end
    redis.call('PEXPIRE', key, ARGV[1])`,
);

/** Shared ARGV: ttlMs. Per key: token, error name, error message, error code ('' = none). */
export const failScript = fencedTransition(
  1,
  '4',
  `    if ARGV[base + 4] ~= '' then
      redis.call('HDEL', key, 'o', 'l', 'r')
      redis.call('HSET', key, 's', 'F', 'en', ARGV[base + 2], 'em', ARGV[base + 3],
        'ec', ARGV[base + 4])
    else
      redis.call('HDEL', key, 'o', 'l', 'r', 'ec')
      redis.call('HSET', key, 's', 'F', 'en', ARGV[base + 2], 'em', ARGV[base + 3])
    end
    redis.call('PEXPIRE', key, ARGV[1])`,
  { clock: false },
);

/** Shared ARGV: leaseMs. Per key: token. The record lives at least lease + retain from now. */
export const renewScript = fencedTransition(
  1,
  '1',
  `    local leaseMs = tonumber(ARGV[1])
    redis.call('HSET', key, 'l', now + leaseMs)
    local keepMs = leaseMs + (tonumber(h[3]) or 0)
    if redis.call('PTTL', key) < keepMs then redis.call('PEXPIRE', key, keepMs) end`,
  { extraFields: ['r'] },
);

/** No shared ARGV. Per key: token. The record becomes RELEASED; its TTL is kept. */
export const releaseScript = fencedTransition(
  0,
  '1',
  `    redis.call('HDEL', key, 'o', 'l', 'r')
    redis.call('HSET', key, 's', 'R')`,
  { clock: false },
);

/** One key. Reply: its expiry (server epoch ms, negative: none), then the hash's field, value pairs. */
export const inspectScript = `
local key = KEYS[1]
-- PEXPIRETIME (Redis 7.0+) is the exact expiry; earlier servers get now + PTTL, which can be 1 ms off.
local ok, expiry = pcall(redis.call, 'PEXPIRETIME', key)
if not ok then
  ${NOW}
  local ttl = redis.call('PTTL', key)
  expiry = ttl < 0 and -1 or now + ttl
end
local out = {string.format('%.0f', expiry)}
for _, v in ipairs(redis.call('HGETALL', key)) do table.insert(out, v) end
return out
`;

export const Scripts = {
  claim: claimScript,
  complete: completeScript,
  fail: failScript,
  renew: renewScript,
  release: releaseScript,
  inspect: inspectScript,
} as const;

export type ScriptName = keyof typeof Scripts;
