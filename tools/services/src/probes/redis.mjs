// @ts-check
// Redis readiness from raw RESP: PING (after AUTH when the URL has a password), and CLUSTER INFO
// for cluster nodes. No client library needed, so the CLI works before `pnpm install`.
import { exchange } from './socket.mjs';

/**
 * @typedef {{ type: 'simple' | 'error' | 'integer' | 'bulk', value: string | null }} RespReply
 */

/**
 * Encodes a command as a RESP array of bulk strings.
 * @param {readonly string[]} args
 */
export function encodeCommand(args) {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''));
}

/**
 * Parses complete top-level replies (no arrays: the probes never ask for one).
 * @param {Buffer} buffer
 * @returns {RespReply[]}
 */
export function parseReplies(buffer) {
  /** @type {RespReply[]} */
  const replies = [];
  let offset = 0;
  while (offset < buffer.length) {
    const lineEnd = buffer.indexOf('\r\n', offset);
    if (lineEnd === -1) break;
    const kind = String.fromCharCode(buffer[offset] ?? 0);
    const line = buffer.toString('utf8', offset + 1, lineEnd);
    if (kind === '$') {
      const length = Number.parseInt(line, 10);
      if (length < 0) {
        replies.push({ type: 'bulk', value: null });
        offset = lineEnd + 2;
        continue;
      }
      const end = lineEnd + 2 + length;
      if (buffer.length < end + 2) break;
      replies.push({ type: 'bulk', value: buffer.toString('utf8', lineEnd + 2, end) });
      offset = end + 2;
      continue;
    }
    /** @type {Record<string, RespReply['type']>} */
    const types = { '+': 'simple', '-': 'error', ':': 'integer' };
    const type = types[kind];
    if (!type) throw new Error(`unexpected RESP reply type "${kind}"`);
    replies.push({ type, value: line });
    offset = lineEnd + 2;
  }
  return replies;
}

/**
 * Sends commands in one go and returns their replies.
 * @param {string} url  redis:// or rediss:// URL (user, password honoured)
 * @param {readonly string[][]} commands
 * @param {number} [timeoutMs]
 */
export async function redisCommands(url, commands, timeoutMs = 3000) {
  const parsed = new URL(url);
  /** @type {string[][]} */
  const all = [];
  if (parsed.password) {
    const password = decodeURIComponent(parsed.password);
    const user = decodeURIComponent(parsed.username);
    all.push(user ? ['AUTH', user, password] : ['AUTH', password]);
  }
  all.push(...commands);
  const received = await exchange({
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || 6379),
    tls: parsed.protocol === 'rediss:',
    payload: Buffer.concat(all.map(encodeCommand)),
    isComplete: (buffer) => parseReplies(buffer).length >= all.length,
    timeoutMs,
  });
  const replies = parseReplies(received);
  const failed = replies.find((reply) => reply.type === 'error');
  if (failed) throw new Error(`Redis answered: ${failed.value}`);
  return replies.slice(all.length - commands.length);
}

/**
 * Throws unless the server answers PING with PONG.
 * @param {string} url
 * @param {number} [timeoutMs]
 */
export async function probeRedis(url, timeoutMs) {
  const [reply] = await redisCommands(url, [['PING']], timeoutMs);
  if (reply?.value !== 'PONG') throw new Error(`PING answered ${JSON.stringify(reply?.value)}`);
}

/**
 * Throws unless the node is in a cluster whose state is ok (all slots served).
 * @param {string} host
 * @param {number} port
 * @param {number} [timeoutMs]
 */
export async function probeClusterNode(host, port, timeoutMs) {
  const [reply] = await redisCommands(`redis://${host}:${port}`, [['CLUSTER', 'INFO']], timeoutMs);
  const state = /cluster_state:(\w+)/.exec(reply?.value ?? '')?.[1];
  if (state !== 'ok') throw new Error(`${host}:${port} reports cluster_state:${state ?? '?'}`);
}
