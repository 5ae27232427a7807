import { randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Ids made in the same
 * millisecond by this process stay in creation order through a 12-bit counter in `rand_a`.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1; // counter wrapped: borrow the next millisecond
    nowMs = lastMs;
  } else {
    lastMs = nowMs;
    sequence = randomBytes(2).readUInt16BE(0) & 0x3ff; // leave head-room for the counter
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
