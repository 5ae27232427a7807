import {
  IdemqError,
  StoreRejectedError,
  StoreUnavailableError,
  type StoreUnavailableReason,
} from '@idemq/core';

/** SQLSTATE classes (first two characters) and codes, and what each means for the store. */
type Verdict =
  | { kind: 'unavailable'; reason: StoreUnavailableReason }
  | { kind: 'rejected'; affects: 'record' | 'store'; hint?: string };

const unreachable: Verdict = { kind: 'unavailable', reason: 'unreachable' };
const busy: Verdict = { kind: 'unavailable', reason: 'busy' };

/**
 * Transient: the connection (08), too many connections or out of disk (53), the server shutting
 * down or starting (57P01–57P03), a cancelled statement (57014, our timeout), a lock or
 * serialization conflict (40, 55P03). Permanent for the record: a value the database cannot hold
 * (22: a NUL character, an invalid encoding; 54: a key too long for the index). Permanent for
 * the store: authentication and permissions (28, 42501), a missing table or column (42P01,
 * 42703: not migrated), a read-only database (25006).
 */
const BY_CODE: ReadonlyMap<string, Verdict> = new Map<string, Verdict>([
  ['57P01', unreachable],
  ['57P02', unreachable],
  ['57P03', busy],
  ['57014', { kind: 'unavailable', reason: 'timeout' }],
  ['55P03', busy],
  ['42501', { kind: 'rejected', affects: 'store' }],
  ['42P01', { kind: 'rejected', affects: 'store', hint: ' (run migrate() or sql/schema.sql)' }],
  ['42703', { kind: 'rejected', affects: 'store', hint: ' (run migrate() or sql/schema.sql)' }],
  ['25006', { kind: 'rejected', affects: 'store' }],
]);

const BY_CLASS: ReadonlyMap<string, Verdict> = new Map<string, Verdict>([
  ['08', unreachable],
  ['53', busy],
  ['40', busy],
  ['22', { kind: 'rejected', affects: 'record' }],
  ['54', { kind: 'rejected', affects: 'record' }],
  ['28', { kind: 'rejected', affects: 'store' }],
]);

/** A SQLSTATE, when `thrown` is an error the server answered with. */
export function sqlState(thrown: unknown): string | undefined {
  const code = (thrown as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Turns a `pg` failure into the store's typed error; a typed one passes through. */
export function storeError(thrown: unknown, operation: string): IdemqError {
  if (thrown instanceof IdemqError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  const state = sqlState(thrown);
  const verdict = state ? (BY_CODE.get(state) ?? BY_CLASS.get(state.slice(0, 2))) : undefined;
  if (verdict?.kind === 'rejected') {
    return new StoreRejectedError(
      `PostgreSQL refused ${operation}: ${message} [${state}]${verdict.hint ?? ''}`,
      { affects: verdict.affects, cause: thrown },
    );
  }
  const reason = verdict?.reason ?? (state ? 'other' : 'unreachable');
  return new StoreUnavailableError(`PostgreSQL ${operation} failed: ${message}`, {
    reason,
    cause: thrown,
  });
}
