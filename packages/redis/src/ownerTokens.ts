import { randomBytes } from 'node:crypto';

/**
 * Owner tokens for claims: a random 96-bit prefix drawn once per store, then a counter. Two
 * owners never share one (another process has another prefix; this one never repeats a count),
 * which is all a token must guarantee: the fencing token orders owners, and anyone able to
 * forge a token can write to Redis directly anyway. Cheaper than a UUID per claim, which
 * formats 16 fresh random bytes into a 36-character string through a dozen temporaries.
 */
export class OwnerTokens {
  private readonly prefix = `${randomBytes(12).toString('base64url')}.`;
  private count = 0;

  next(): string {
    this.count += 1;
    return this.prefix + this.count.toString(36);
  }
}
