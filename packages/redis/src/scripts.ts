/*
 * The Lua scripts behind every record transition. Each takes N record keys and a fixed stride
 * of arguments per key, so one call serves a single operation, `claimMany`, or a tick's worth of
 * coalesced operations on one slot. Time comes from the server (`TIME`), never the client.
 * Replies are flat arrays of strings and integers only, so RESP2 and RESP3 clients agree.
 *
 * Record hash fields: s state, a attempt, f fencing token, o owner token, l lease expiry (ms),
 * r retain after lease (ms), x expiry (epoch ms, also set with PEXPIREAT, so reads are exact),
 * p payload fingerprint, c completed at (ms), v result, en / em / ec last error name / message /
 * code.
 */

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

/**
 * A fenced transition over N keys: for each key whose IN_PROGRESS record is owned by the token
 * in its first argument, run `body` (which sees `key`, `base` — the key's argument offset —,
 * `now`, and `h`: the fields `s`, `o`, then `extraFields`) and answer 1; answer 0, changing
 * nothing, for every other key. Each server command costs a Lua round trip into Redis, so
 * bodies read what they need in this one HMGET and write with one HSET.
 */
function fencedTransition(stride: number, body: string, extraFields: string[] = []): string {
  const fields = ['s', 'o', ...extraFields].map((f) => `'${f}'`).join(', ');
  return `${NOW}
local out = {}
for i, key in ipairs(KEYS) do
  local base = (i - 1) * ${stride}
  local h = redis.call('HMGET', key, ${fields})
  if h[1] == 'IN_PROGRESS' and h[2] == ARGV[base + 1] then
${body}
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
`;
}

/** Per key ARGV: token, leaseMs, retainMs, fingerprint ('' = none). 8 reply fields per key. */
const CLAIM_STRIDE = 4;
export const CLAIM_REPLY_WIDTH = 8;
export const claimScript = `${NOW}
local out = {}
local function reply(i, a, b, c, d, e, f, g, h)
  local o = (i - 1) * ${CLAIM_REPLY_WIDTH}
  out[o + 1], out[o + 2], out[o + 3], out[o + 4] = a, b, c, d
  out[o + 5], out[o + 6], out[o + 7], out[o + 8] = e, f, g, h
end
for i, key in ipairs(KEYS) do
  local base = (i - 1) * ${CLAIM_STRIDE}
  local token, leaseMs, retainMs, fp = ARGV[base + 1], tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), ARGV[base + 4]
  local h = redis.call('HMGET', key, 's', 'a', 'f', 'l', 'p', 'c', 'v', 'en', 'em', 'ec')
  local state = h[1]
  if state and fp ~= '' and h[5] and h[5] ~= fp then
    reply(i, 'key-reuse', '', '', '', '', '', '', '')
  elseif state == 'COMPLETED' then
    reply(i, 'duplicate', h[6] or '0', h[7] and '1' or '0', h[7] or '', '', '', '', '')
  elseif state == 'IN_PROGRESS' and tonumber(h[4]) > now then
    reply(i, 'in-progress', tostring(tonumber(h[4]) - now), h[2], '', '', '', '', '')
  else
    local attempt = (tonumber(h[2]) or 0) + ((state == 'RELEASED') and 0 or 1)
    -- Composite fencing token: above the record's last one, and above any token this record
    -- had before it expired (server microseconds only grow).
    local fence = string.format('%.0f', math.max((tonumber(h[3]) or 0) + 1, nowUs))
    local leaseUntil = now + leaseMs
    local expiry = leaseUntil + retainMs
    if fp ~= '' then
      redis.call('HSET', key, 's', 'IN_PROGRESS', 'a', attempt, 'f', fence, 'o', token,
        'l', leaseUntil, 'r', retainMs, 'x', expiry, 'p', fp)
    else
      redis.call('HSET', key, 's', 'IN_PROGRESS', 'a', attempt, 'f', fence, 'o', token,
        'l', leaseUntil, 'r', retainMs, 'x', expiry)
    end
    redis.call('PEXPIREAT', key, expiry)
    reply(i, 'claimed', fence, tostring(attempt), tostring(leaseUntil),
      h[8] or '', h[9] or '', h[10] or '', h[8] and '1' or '0')
  end
end
return out
`;

/** Per key ARGV: token, ttlMs, hasResult ('1'/'0'), result. Reply: 1 ok / 0 lease lost. */
export const completeScript = fencedTransition(
  4,
  `    redis.call('HDEL', key, 'o', 'l', 'en', 'em', 'ec')
    local expiry = now + tonumber(ARGV[base + 2])
    if ARGV[base + 3] == '1' then
      redis.call('HSET', key, 's', 'COMPLETED', 'c', now, 'x', expiry, 'v', ARGV[base + 4])
    else
      redis.call('HSET', key, 's', 'COMPLETED', 'c', now, 'x', expiry)
    end
    redis.call('PEXPIREAT', key, expiry)`,
);

/** Per key ARGV: token, ttlMs, error name, error message, error code. */
export const failScript = fencedTransition(
  5,
  `    local expiry = now + tonumber(ARGV[base + 2])
    if ARGV[base + 5] ~= '' then
      redis.call('HDEL', key, 'o', 'l')
      redis.call('HSET', key, 's', 'FAILED', 'en', ARGV[base + 3], 'em', ARGV[base + 4],
        'ec', ARGV[base + 5], 'x', expiry)
    else
      redis.call('HDEL', key, 'o', 'l', 'ec')
      redis.call('HSET', key, 's', 'FAILED', 'en', ARGV[base + 3], 'em', ARGV[base + 4],
        'x', expiry)
    end
    redis.call('PEXPIREAT', key, expiry)`,
);

/** Per key ARGV: token, leaseMs. The record lives at least lease + retain from now. */
export const renewScript = fencedTransition(
  2,
  `    local leaseMs = tonumber(ARGV[base + 2])
    local keep = now + leaseMs + (tonumber(h[3]) or 0)
    if (tonumber(h[4]) or 0) < keep then
      redis.call('HSET', key, 'l', now + leaseMs, 'x', keep)
      redis.call('PEXPIREAT', key, keep)
    else
      redis.call('HSET', key, 'l', now + leaseMs)
    end`,
  ['r', 'x'],
);

/** Per key ARGV: token. The record becomes RELEASED; its TTL is kept. */
export const releaseScript = fencedTransition(
  1,
  `    redis.call('HDEL', key, 'o', 'l')
    redis.call('HSET', key, 's', 'RELEASED')`,
);

/** One key. Reply: now, pttl, then the hash as field, value pairs. */
export const inspectScript = `${NOW}
local out = {tostring(now), tostring(redis.call('PTTL', KEYS[1]))}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
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
