import {
  type ClaimOutcome,
  type IdempotencyRecord,
  type RecordId,
  type RecordState,
  RecordStates,
  type ResultOmission,
  type StoredError,
  type TransitionOutcome,
} from '@idemq/core';
import { classifyRecordError, unexpectedReply } from './errorClassifier.js';

const text = (value: unknown): string => (typeof value === 'string' ? value : String(value ?? ''));

/** A number the reply must hold; anything else makes the whole element unreadable. */
function numberIn(reply: unknown, field: unknown): number {
  const value = Number(field);
  if (field === '' || !Number.isFinite(value)) throw unexpectedReply('claim', reply, 'record');
  return value;
}

/**
 * One key's element of the claim script's reply; `token` is the one the caller generated and
 * sent, `leaseMs` the lease it asked for. A new id claimed answers the server's clock in µs
 * alone (fencing token; attempt 1; lease until that instant's ms + `leaseMs`, as the script
 * computed it), anything else 8 fields, read where needed: this runs for every message. An
 * element the script answered with an error, or one that cannot be read, rejects with a typed
 * store error for this record alone.
 */
export function decodeClaim(reply: unknown, token: string, leaseMs: number): ClaimOutcome {
  if (!Array.isArray(reply)) {
    const micros = text(reply);
    if (!/^\d{7,}$/.test(micros)) throw unexpectedReply('claim', reply, 'record');
    return {
      status: 'claimed',
      token,
      fencingToken: Number(micros),
      attempt: 1,
      leaseExpiresAt: Number(micros.slice(0, -3)) + leaseMs,
    };
  }
  const fields = reply as unknown[];
  const status = text(fields[0]);
  switch (status) {
    case 'claimed': {
      const claimed = {
        status: 'claimed' as const,
        token,
        fencingToken: numberIn(reply, fields[1]),
        attempt: numberIn(reply, fields[2]),
        leaseExpiresAt: numberIn(reply, fields[3]),
      };
      return text(fields[7]) === '1'
        ? {
            ...claimed,
            previousError: storedError(text(fields[4]), text(fields[5]), text(fields[6])),
          }
        : claimed;
    }
    case 'duplicate': {
      const completedAt = numberIn(reply, fields[1]);
      if (text(fields[2]) === '1')
        return { status: 'duplicate', completedAt, result: text(fields[3]) };
      const omitted = text(fields[5]);
      return omitted === ''
        ? { status: 'duplicate', completedAt }
        : { status: 'duplicate', completedAt, resultOmitted: omitted as ResultOmission };
    }
    case 'in-progress':
      return {
        status: 'in-progress',
        retryAfterMs: numberIn(reply, fields[1]),
        attempt: numberIn(reply, fields[2]),
      };
    case 'key-reuse':
      return { status: 'key-reuse' };
    case 'error':
      throw classifyRecordError('claim', text(fields[1]));
    default:
      throw unexpectedReply('claim', reply, 'record');
  }
}

/**
 * One key's element of a fenced transition's reply (complete, fail, renew, release): 1 when the
 * token owned the record and the transition was made, 0 when it did not (nothing changed); an
 * error element, or anything else, rejects with a typed store error for this record alone.
 */
export function decodeTransition(operation: string, reply: unknown): TransitionOutcome {
  if (reply === 1) return 'ok';
  if (reply === 0) return 'lease-lost';
  if (Array.isArray(reply) && reply[0] === 'error') {
    throw classifyRecordError(operation, text(reply[1]));
  }
  throw unexpectedReply(operation, reply, 'record');
}

/**
 * The fingerprint a record holds after the claim that got `reply` (`requested`: the claim's
 * own), for the local cache: a claim without one keeps the record's, which only Redis knows.
 * Undefined for outcomes that leave nothing to cache.
 */
export function fingerprintAfterClaim(
  reply: unknown,
  requested: string | undefined,
): string | undefined {
  // A new id: the record holds what the claim brought.
  if (!Array.isArray(reply)) return requested;
  const fields = reply as unknown[];
  const status = text(fields[0]);
  const held = status === 'duplicate' ? fields[4] : status === 'claimed' ? fields[8] : undefined;
  const fingerprint = text(held);
  return fingerprint === '' ? undefined : fingerprint;
}

/** How long the record a `duplicate` reply came from has left (ms, server-measured). */
export function duplicateTtlMs(reply: unknown): number {
  const ttl = Array.isArray(reply) ? Number(reply[6]) : Number.NaN;
  // A record without an expiry, or a reply without the figure: cache it for no time at all.
  return Number.isFinite(ttl) && ttl > 0 ? ttl : 0;
}

function storedError(name = '', message = '', code = ''): StoredError {
  return code === '' ? { name, message } : { name, message, code };
}

/** The inspect script's reply (expiry, field/value pairs) as a record. */
export function decodeRecord(id: RecordId, reply: unknown[]): IdempotencyRecord | undefined {
  const [expiry, ...pairs] = reply.map(text);
  if (pairs.length === 0) return undefined;
  const hash = new Map<string, string>();
  for (let i = 0; i + 1 < pairs.length; i += 2)
    hash.set(pairs[i] as string, pairs[i + 1] as string);
  const state = stateNamed(hash.get('s'));
  const expiresAt = Number(expiry);
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
  assign(record, 'expiresAt', expiresAt >= 0 ? expiresAt : undefined);
  assign(record, 'result', hash.get('v'));
  assign(record, 'resultOmitted', hash.get('ro') as ResultOmission | undefined);
  if (hash.has('en'))
    record.lastError = storedError(hash.get('en'), hash.get('em'), hash.get('ec'));
  return record;
}

/** A record's state as written: one letter, or spelled out by an earlier version. */
const STATES: Record<string, RecordState> = {
  I: RecordStates.IN_PROGRESS,
  C: RecordStates.COMPLETED,
  F: RecordStates.FAILED,
  R: RecordStates.RELEASED,
};

function stateNamed(written: string | undefined): RecordState {
  return STATES[written ?? ''] ?? (written as RecordState);
}

function assign<K extends keyof IdempotencyRecord>(
  record: IdempotencyRecord,
  key: K,
  value: IdempotencyRecord[K] | undefined,
): void {
  if (value !== undefined) record[key] = value;
}
