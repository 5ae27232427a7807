import {
  IdemqError,
  StoreRejectedError,
  type StoreRejection,
  StoreUnavailableError,
  type StoreUnavailableReason,
} from '@idemq/core';

/** What a Redis error means for the store: try again later, or a refusal that will not change. */
type Verdict =
  | { kind: 'unavailable'; reason: StoreUnavailableReason }
  | { kind: 'rejected'; affects: StoreRejection };

const busy: Verdict = { kind: 'unavailable', reason: 'busy' };
const refusesStore: Verdict = { kind: 'rejected', affects: 'store' };
const refusesRecord: Verdict = { kind: 'rejected', affects: 'record' };

/**
 * Redis error replies by their first word (the error code), and what each means. Transient: the
 * server says it cannot serve now (loading its data, a script running past its time, a failover
 * or resharding under way, a replica without its primary, too few replicas) or is out of memory
 * under `noeviction` (memory frees as keys expire). Permanent for the record: another kind of
 * value under the record's key. Permanent for the store: what only a change of configuration
 * fixes (permissions, authentication, a script the server no longer has after a reload, keys a
 * Cluster cannot serve together, a standalone client pointed at a Cluster node).
 */
const BY_CODE: ReadonlyMap<string, Verdict> = new Map<string, Verdict>([
  ['LOADING', busy],
  ['BUSY', busy],
  ['TRYAGAIN', busy],
  ['MASTERDOWN', busy],
  ['READONLY', busy],
  ['CLUSTERDOWN', busy],
  ['NOREPLICAS', busy],
  ['UNBLOCKED', busy],
  ['OOM', { kind: 'unavailable', reason: 'out-of-memory' }],
  ['WRONGTYPE', refusesRecord],
  ['NOPERM', refusesStore],
  ['NOAUTH', refusesStore],
  ['WRONGPASS', refusesStore],
  ['NOSCRIPT', refusesStore],
  ['CROSSSLOT', refusesStore],
  ['MOVED', refusesStore],
  ['ASK', refusesStore],
]);

/** `ERR` replies that still say what went wrong, by their words. */
const BY_TEXT: readonly [RegExp, Verdict][] = [
  [/^ERR max number of clients reached/, { kind: 'unavailable', reason: 'unreachable' }],
  [/^ERR (unknown command|unknown subcommand|wrong number of arguments)/, refusesStore],
  // A script that failed outside any one record's step (a record's own step answers for itself).
  [/^ERR (Error (running|compiling) script|user_script:)/, refusesStore],
];

/** The error code a script failure wraps (Redis before 7 prefixes it): `@user_script:12: OOM …`. */
const WRAPPED_CODE = /@user_script:\s*\d+:\s*-?([A-Z]+) /;

function verdictOfReply(text: string): Verdict | undefined {
  const code = /^-?([A-Z]+)[ :]/.exec(text)?.[1];
  const byCode = code === undefined ? undefined : BY_CODE.get(code);
  if (byCode) return byCode;
  const wrapped = WRAPPED_CODE.exec(text)?.[1];
  const byWrapped = wrapped === undefined ? undefined : BY_CODE.get(wrapped);
  if (byWrapped) return byWrapped;
  for (const [pattern, verdict] of BY_TEXT) if (pattern.test(text)) return verdict;
  return undefined;
}

/** A client error without a reply from Redis: the connection or the client's own timeout. */
function verdictOfClientError(error: Error): Verdict {
  if (/timed? ?out/i.test(error.message)) return { kind: 'unavailable', reason: 'timeout' };
  const { code } = error as Error & { code?: unknown };
  const connection =
    typeof code === 'string' ||
    error instanceof AggregateError ||
    /MaxRetriesPerRequest|ClusterAllFailed/.test(error.name) ||
    /connect|connection|closed|stream|socket|startup nodes|redirections/i.test(error.message);
  return { kind: 'unavailable', reason: connection ? 'unreachable' : 'other' };
}

function typed(operation: string, detail: string, verdict: Verdict, cause: unknown): IdemqError {
  if (verdict.kind === 'rejected') return rejected(operation, detail, verdict.affects, cause);
  return new StoreUnavailableError(`Redis ${operation} failed: ${detail}`, {
    reason: verdict.reason,
    cause,
  });
}

function rejected(
  operation: string,
  detail: string,
  affects: StoreRejection,
  cause: unknown,
): StoreRejectedError {
  const message =
    affects === 'record'
      ? `Redis ${operation} refused the record: ${detail}`
      : `Redis ${operation} refused: ${detail} (every operation will be, until the configuration is fixed)`;
  return new StoreRejectedError(message, { affects, cause });
}

/**
 * Whatever a Redis call threw, as a typed store error: a `StoreUnavailableError` with its reason
 * when trying again later may work (and for any error not recognised: fail-closed keeps
 * retrying), a `StoreRejectedError` when Redis refused in a way that will not change. An
 * `IdemqError` is returned as it is. The message never holds the connection URL.
 */
export function classifyRedisError(operation: string, thrown: unknown): IdemqError {
  if (thrown instanceof IdemqError) return thrown;
  if (!(thrown instanceof Error)) {
    return typed(operation, 'unknown error', { kind: 'unavailable', reason: 'other' }, thrown);
  }
  const detail = redact(thrown.message);
  if (thrown.name === 'ReplyError') {
    const verdict = verdictOfReply(thrown.message) ?? { kind: 'unavailable', reason: 'other' };
    return typed(operation, detail, verdict, thrown);
  }
  return typed(operation, detail, verdictOfClientError(thrown), thrown);
}

/**
 * The error a script answered for one record of a call (`{'error', text}` in the reply), as a
 * typed store error. Redis's own errors are classified by their code; anything else (a Lua
 * error on the record's fields) is a refusal of that record, which the other records of the
 * call did not share.
 */
export function classifyRecordError(operation: string, text: string): IdemqError {
  const verdict = verdictOfReply(text) ?? refusesRecord;
  return typed(operation, redact(text), verdict, new Error(text));
}

/** A reply that is not what the script answers: the record's, or (`affects: 'store'`) the call's. */
export function unexpectedReply(
  operation: string,
  reply: unknown,
  affects: StoreRejection,
): StoreRejectedError {
  const shown = JSON.stringify(reply)?.slice(0, 200) ?? String(reply);
  return rejected(operation, `unexpected reply ${shown}`, affects, undefined);
}

/** Strips credentials from anything that looks like a URL. */
export function redact(text: string): string {
  return text.replace(/(\w+:\/\/)([^@/\s]*)@/g, '$1***@');
}
