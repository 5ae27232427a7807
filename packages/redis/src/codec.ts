import type {
  ClaimOutcome,
  IdempotencyRecord,
  RecordId,
  RecordState,
  StoredError,
} from '@idemq/core';

const text = (value: unknown): string => (typeof value === 'string' ? value : String(value ?? ''));

/** One key's 8 fields of the claim script's reply. */
export function decodeClaim(fields: unknown[]): ClaimOutcome {
  const [status, a, b, c, d, e, f, g] = fields.map(text);
  switch (status) {
    case 'claimed':
      return {
        status: 'claimed',
        token: '', // filled in by the caller, who generated it
        fencingToken: Number(a),
        attempt: Number(b),
        leaseExpiresAt: Number(c),
        ...(g === '1' ? { previousError: storedError(d, e, f) } : {}),
      };
    case 'duplicate':
      return { status: 'duplicate', completedAt: Number(a), ...(b === '1' ? { result: c } : {}) };
    case 'in-progress':
      return { status: 'in-progress', retryAfterMs: Number(a), attempt: Number(b) };
    case 'key-reuse':
      return { status: 'key-reuse' };
    default:
      throw new Error(`unexpected claim reply ${JSON.stringify(status)}`);
  }
}

function storedError(name = '', message = '', code = ''): StoredError {
  return code === '' ? { name, message } : { name, message, code };
}

/** The inspect script's reply (now, pttl, field/value pairs) as a record. */
export function decodeRecord(id: RecordId, reply: unknown[]): IdempotencyRecord | undefined {
  const [now, pttl, ...pairs] = reply.map(text);
  if (pairs.length === 0) return undefined;
  const hash = new Map<string, string>();
  for (let i = 0; i + 1 < pairs.length; i += 2)
    hash.set(pairs[i] as string, pairs[i + 1] as string);
  const state = hash.get('s') as RecordState;
  const ttl = Number(pttl);
  const record: IdempotencyRecord = {
    scope: id.scope,
    requestId: id.requestId,
    state,
    attempt: Number(hash.get('a')),
    fencingToken: Number(hash.get('f')),
  };
  const number = (field: string) => (hash.has(field) ? Number(hash.get(field)) : undefined);
  assign(record, 'fingerprint', hash.get('p'));
  assign(record, 'leaseExpiresAt', state === 'IN_PROGRESS' ? number('l') : undefined);
  assign(record, 'completedAt', number('c'));
  assign(record, 'expiresAt', number('x') ?? (ttl >= 0 ? Number(now) + ttl : undefined));
  assign(record, 'result', hash.get('v'));
  if (hash.has('en'))
    record.lastError = storedError(hash.get('en'), hash.get('em'), hash.get('ec'));
  return record;
}

function assign<K extends keyof IdempotencyRecord>(
  record: IdempotencyRecord,
  key: K,
  value: IdempotencyRecord[K] | undefined,
): void {
  if (value !== undefined) record[key] = value;
}
