import { randomUUID } from 'node:crypto';
import {
  type ClaimOutcome,
  type ClaimRequest,
  type CompleteRequest,
  DEFAULT_MAX_RESULT_BYTES,
  type FailRequest,
  type FencedRequest,
  type IdempotencyRecord,
  type Logger,
  type RecordId,
  type RenewRequest,
  type ResultOmission,
  type SettledTransition,
  type Store,
  StoreClosedError,
  type StoredError,
  type StoreTransaction,
  StoreUnavailableError,
  silentLogger,
  type TransactionalStore,
  type TransitionOutcome,
} from '@idemq/core';
import { assertResultFits, OperationBatcher, OptionsCheck, settle } from '@idemq/core/adapter';
import pg from 'pg';
import { storeError } from './errorClassifier.js';
import { openRunTransaction } from './runTransaction.js';
import { type Statements, statements } from './statements.js';
import { Sweeper, type SweeperOptions } from './sweeper.js';
import { DEFAULT_TABLE, quotedTable } from './tableName.js';
import { timedQuery } from './timedQuery.js';
import { withTimeout } from './withTimeout.js';

export interface PostgresStoreOptions {
  /** A `pg` Pool you own; never ended by the store. Give `pool` or `connectionString`. */
  pool?: pg.Pool;
  /** A `postgres://` URL: the store makes its own pool (of `poolSize`) and ends it on `close()`. */
  connectionString?: string;
  /**
   * Connections of the pool the store makes from `connectionString`.
   * @default 10
   */
  poolSize?: number;
  /**
   * The store's table, `name` or `schema.name`, created by `migrate()` (never by the store).
   * @default 'idemq_records'
   */
  table?: string;
  /**
   * An operation that takes longer (waiting for a connection included) fails with a retriable
   * `StoreUnavailableError`.
   * @default 2000
   */
  operationTimeoutMs?: number;
  /**
   * Largest stored result, in UTF-8 bytes.
   * @default 65536
   */
  maxResultBytes?: number;
  /**
   * The transactional mode: every claimed run gets `ctx.transaction`, a client inside `BEGIN`,
   * and its completion commits in that transaction. Each running handler holds one connection.
   * `true` with `connectionString`: a second pool of `poolSize` for the transactions; `true` with
   * `pool`: that pool, which then needs more connections than the consumer's `concurrency`
   * (leases are renewed through it); `{ pool }`: the transactions' own pool.
   * @default false
   */
  transactions?: boolean | { pool: pg.Pool };
  /**
   * Coalesce `claim` and `complete` calls issued while earlier ones are on the wire into one
   * statement per batch (the `claimMany` / `completeMany` statements).
   * @default true
   */
  coalesce?: boolean;
  /**
   * Most records in one coalesced statement.
   * @default 32
   */
  maxBatch?: number;
  /**
   * Coalesced statements of one kind on the wire at once.
   * @default 2
   */
  callsInFlight?: number;
  /**
   * Send the store's statements as named prepared statements, parsed and planned once per
   * connection. Turn off behind a pooler that cannot keep them (PgBouncer in transaction mode
   * before 1.21).
   * @default true
   */
  preparedStatements?: boolean;
  /** Deletes expired records in the background (see `sweepExpired` to run it from cron instead). */
  sweeper?: SweeperOptions;
  logger?: Logger;
}

export const POSTGRES_STORE_DEFAULTS = Object.freeze({
  table: DEFAULT_TABLE,
  coalesce: true,
  maxBatch: 32,
  callsInFlight: 2,
  preparedStatements: true,
  poolSize: 10,
  operationTimeoutMs: 2_000,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
});

export interface PostgresStore extends Store {
  /** Checks that the table is there and answers; rejects with a clear typed error if not. */
  ready(): Promise<void>;
  /** Deletes up to `batchSize` expired records now; resolves how many. */
  sweep(batchSize?: number): Promise<number>;
  /** Statements sent so far (one round trip each). */
  stats(): { roundTrips: number };
}

/** Waves of one batch that may meet a concurrent claim before the store reports itself busy. */
const MAX_CLAIM_RETRIES = 20;

/**
 * The PostgreSQL `Store`: one table, every transition one statement fenced by the owner token
 * and timed by the database's clock. With `transactions`, completions commit in the handler's
 * own transaction (`ctx.transaction`).
 *
 * @example
 * const store = postgresStore({ connectionString: 'postgres://127.0.0.1/app' });
 * await migrate(pool); // once, in your deployment
 * const consumer = createConsumer({ store, transport, source: 'payments', scope: 'billing', handler });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore;
export function postgresStore(
  options: PostgresStoreOptions & { transactions: true | { pool: pg.Pool } },
): PostgresStore & TransactionalStore;
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const settings = checkOptions(options);
  const store = new PgStore(settings);
  const transactionPool = settings.transactionPool;
  if (transactionPool === undefined) return store;
  return Object.assign(store, {
    // The run's claim is not needed: the completion names its record when it commits.
    openTransaction: () => store.openTransactionOn(transactionPool),
  });
}

interface Settings {
  pool: pg.Pool;
  /** Where run transactions take their connections, in the transactional mode. */
  transactionPool: pg.Pool | undefined;
  /** The pools the store made, ended by `close()`. */
  ownPools: pg.Pool[];
  sql: Statements;
  operationTimeoutMs: number;
  maxResultBytes: number;
  sweeper: SweeperOptions | undefined;
  logger: Logger;
  coalesce: boolean;
  maxBatch: number;
  callsInFlight: number;
  preparedStatements: boolean;
}

function checkOptions(options: PostgresStoreOptions): Settings {
  const check = new OptionsCheck('postgresStore');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  check
    .expect(
      (options.pool === undefined) !== (options.connectionString === undefined),
      'give either pool or connectionString',
    )
    .text('connectionString', options.connectionString, true)
    .integer('poolSize', options.poolSize, 1, 10_000)
    .integer('operationTimeoutMs', options.operationTimeoutMs, 1)
    .integer('maxResultBytes', options.maxResultBytes, 1)
    .expect(
      options.transactions === undefined ||
        typeof options.transactions === 'boolean' ||
        typeof options.transactions?.pool?.connect === 'function',
      'transactions must be true, false or { pool } with a pg Pool',
    )
    .integer('maxBatch', options.maxBatch, 1, 10_000)
    .integer('callsInFlight', options.callsInFlight, 1, 64)
    .integer('sweeper.intervalMs', options.sweeper?.intervalMs, 1)
    .integer('sweeper.batchSize', options.sweeper?.batchSize, 1, 1_000_000)
    .done();
  const table = quotedTable(options.table ?? DEFAULT_TABLE, 'postgresStore');
  const timeoutMs = options.operationTimeoutMs ?? POSTGRES_STORE_DEFAULTS.operationTimeoutMs;
  const ownPools: pg.Pool[] = [];
  const makePool = () => {
    const made = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? POSTGRES_STORE_DEFAULTS.poolSize,
      connectionTimeoutMillis: timeoutMs,
    });
    // An idle connection that dies (a server restart) must not crash the process.
    made.on('error', () => {});
    ownPools.push(made);
    return made;
  };
  const pool = options.pool ?? makePool();
  // A pool of its own for transactions when the store makes its pools: running handlers then
  // never take the connections that renew their leases.
  const transactionPool =
    typeof options.transactions === 'object'
      ? options.transactions.pool
      : options.transactions
        ? (options.pool ?? makePool())
        : undefined;
  return {
    pool,
    transactionPool,
    ownPools,
    sql: statements(table),
    operationTimeoutMs: timeoutMs,
    maxResultBytes: options.maxResultBytes ?? POSTGRES_STORE_DEFAULTS.maxResultBytes,
    sweeper: options.sweeper,
    logger: options.logger ?? silentLogger,
    coalesce: options.coalesce ?? POSTGRES_STORE_DEFAULTS.coalesce,
    maxBatch: options.maxBatch ?? POSTGRES_STORE_DEFAULTS.maxBatch,
    callsInFlight: options.callsInFlight ?? POSTGRES_STORE_DEFAULTS.callsInFlight,
    preparedStatements: options.preparedStatements ?? POSTGRES_STORE_DEFAULTS.preparedStatements,
  };
}

interface ClaimRow {
  i: number;
  status: 'claimed' | 'duplicate' | 'in-progress' | 'key-reuse' | 'retry';
  attempt: number;
  fencing_token: number | null;
  lease_expires_at: number | null;
  last_error: string | null;
  completed_at: number | null;
  result: Buffer | null;
  result_omitted: ResultOmission | null;
  retry_after_ms: number | null;
  fingerprint: string | null;
}

interface RecordRow {
  state: 'I' | 'C' | 'F' | 'R';
  attempt: number;
  fencing_token: number;
  fingerprint: string | null;
  lease_expires_at: number | null;
  completed_at: number | null;
  expires_at: number;
  last_error: string | null;
  result: Buffer | null;
  result_omitted: ResultOmission | null;
}

const STATES = { I: 'IN_PROGRESS', C: 'COMPLETED', F: 'FAILED', R: 'RELEASED' } as const;

class PgStore implements PostgresStore {
  private closed = false;
  private closing: Promise<void> | undefined;
  private roundTrips = 0;
  private readonly sweeper: Sweeper | undefined;
  private readonly claims: OperationBatcher<ClaimRequest, ClaimOutcome> | undefined;
  private readonly completions: OperationBatcher<CompleteRequest, SettledTransition> | undefined;

  constructor(private readonly settings: Settings) {
    if (settings.coalesce) {
      const batching = {
        maxBatch: settings.maxBatch,
        inFlight: settings.callsInFlight,
        timeoutMs: settings.operationTimeoutMs,
      };
      this.claims = new OperationBatcher({
        ...batching,
        what: 'PostgreSQL claim',
        send: (requests) => this.claimMany(requests),
      });
      this.completions = new OperationBatcher({
        ...batching,
        what: 'PostgreSQL complete',
        send: (requests) => this.completeMany(requests),
      });
    }
    if (settings.sweeper) {
      this.sweeper = new Sweeper(
        settings.sweeper,
        (batchSize) => this.sweep(batchSize),
        settings.logger,
      );
    }
  }

  async ready(): Promise<void> {
    await this.query('ready', this.settings.sql.inspect, ['', '']);
  }

  async claim(request: ClaimRequest): Promise<ClaimOutcome> {
    this.assertOpen();
    if (this.claims) return this.claims.run(request);
    const [outcome] = await this.claimMany([request]);
    return outcome as ClaimOutcome;
  }

  async claimMany(requests: readonly ClaimRequest[]): Promise<ClaimOutcome[]> {
    this.assertOpen();
    const outcomes: (ClaimOutcome | undefined)[] = new Array(requests.length);
    // What each id's record is after the last claim of it answered, while that is known.
    const after = new Map<string, RecordAfterClaim>();
    let retries = 0;
    for (;;) {
      const wave: number[] = [];
      const inWave = new Set<string>();
      for (let index = 0; index < requests.length; index += 1) {
        if (outcomes[index] !== undefined) continue;
        const request = requests[index] as ClaimRequest;
        const key = keyOf(request);
        if (inWave.has(key)) continue;
        const known = after.get(key);
        // A later claim of an id this batch already claimed sees that claim: answered here.
        const seen = known && answerFromRecord(known, request);
        if (seen) outcomes[index] = seen;
        else {
          inWave.add(key);
          wave.push(index);
        }
      }
      if (wave.length === 0) return outcomes as ClaimOutcome[];
      const answered = await this.claimWave(wave, requests, outcomes, after);
      if (answered < wave.length && ++retries === MAX_CLAIM_RETRIES) {
        throw new StoreUnavailableError('PostgreSQL claims kept racing other claims', {
          reason: 'busy',
        });
      }
    }
  }

  /** Claims one id each in one statement; resolves how many were answered (not `retry`). */
  private async claimWave(
    wave: readonly number[],
    requests: readonly ClaimRequest[],
    outcomes: (ClaimOutcome | undefined)[],
    after: Map<string, RecordAfterClaim>,
  ): Promise<number> {
    const tokens = wave.map(() => randomUUID());
    const picked = wave.map((index) => requests[index] as ClaimRequest);
    const rows = await this.query<ClaimRow>('claim', this.settings.sql.claim, [
      picked.map((r) => r.scope),
      picked.map((r) => r.requestId),
      picked.map((r) => r.leaseMs),
      picked.map((r) => r.retainMs),
      picked.map((r) => r.fingerprint ?? null),
      tokens,
    ]);
    let answered = 0;
    for (const row of rows) {
      const position = row.i - 1;
      const request = picked[position] as ClaimRequest;
      const outcome = claimOutcome(row, tokens[position] as string);
      if (outcome === undefined) continue;
      answered += 1;
      outcomes[wave[position] as number] = outcome;
      const record = recordAfter(outcome, row.fingerprint, request.leaseMs);
      if (record) after.set(keyOf(request), record);
      else after.delete(keyOf(request));
    }
    return answered;
  }

  async complete(request: CompleteRequest): Promise<TransitionOutcome> {
    this.assertOpen();
    assertResultFits(request.result, this.settings.maxResultBytes);
    if (this.completions) {
      const settled = await this.completions.run(request);
      if (settled.status === 'rejected') throw settled.reason;
      return settled.value;
    }
    return this.completeOne(request);
  }

  private async completeOne(request: CompleteRequest): Promise<TransitionOutcome> {
    const rows = await this.execute(
      'complete',
      this.settings.sql.complete,
      completeParams(request),
    );
    return rows === 1 ? 'ok' : 'lease-lost';
  }

  async completeMany(requests: readonly CompleteRequest[]): Promise<SettledTransition[]> {
    this.assertOpen();
    const settled: SettledTransition[] = new Array(requests.length);
    const sent: number[] = [];
    const seen = new Set<string>();
    requests.forEach((request, index) => {
      const key = `${keyOf(request)}\n${request.token}`;
      if (seen.has(key)) {
        // The same claim again: its first completion spent the token, or it never held it.
        settled[index] = { status: 'fulfilled', value: 'lease-lost' };
        return;
      }
      seen.add(key);
      try {
        assertResultFits(request.result, this.settings.maxResultBytes);
        sent.push(index);
      } catch (error) {
        settled[index] = { status: 'rejected', reason: error as Error };
      }
    });
    if (sent.length === 0) return settled;
    const picked = sent.map((index) => requests[index] as CompleteRequest);
    let completed: Set<number>;
    try {
      const rows = await this.query<{ i: number }>('completeMany', this.settings.sql.completeMany, [
        picked.map((r) => r.scope),
        picked.map((r) => r.requestId),
        picked.map((r) => r.token),
        picked.map((r) => r.ttlMs),
        picked.map((r) => resultBytes(r.result)),
        picked.map((r) => r.resultOmitted ?? null),
      ]);
      completed = new Set(rows.map((row) => row.i - 1));
    } catch (error) {
      if (!(error instanceof Error) || (error as { affects?: unknown }).affects !== 'record') {
        for (const index of sent) settled[index] = { status: 'rejected', reason: error as Error };
        return settled;
      }
      // One record the database cannot hold failed the statement: complete each on its own.
      const each = await Promise.all(picked.map((request) => settle(this.completeOne(request))));
      sent.forEach((index, position) => {
        settled[index] = each[position] as SettledTransition;
      });
      return settled;
    }
    sent.forEach((index, position) => {
      settled[index] = {
        status: 'fulfilled',
        value: completed.has(position) ? 'ok' : 'lease-lost',
      };
    });
    return settled;
  }

  async fail(request: FailRequest): Promise<TransitionOutcome> {
    this.assertOpen();
    const error: StoredError = { name: request.error.name, message: request.error.message };
    if (request.error.code !== undefined) error.code = request.error.code;
    const rows = await this.execute('fail', this.settings.sql.fail, [
      request.scope,
      request.requestId,
      request.token,
      request.ttlMs,
      JSON.stringify(error),
    ]);
    return rows === 1 ? 'ok' : 'lease-lost';
  }

  async renew(request: RenewRequest): Promise<TransitionOutcome> {
    this.assertOpen();
    const rows = await this.execute('renew', this.settings.sql.renew, [
      request.scope,
      request.requestId,
      request.token,
      request.leaseMs,
    ]);
    return rows === 1 ? 'ok' : 'lease-lost';
  }

  async release(request: FencedRequest): Promise<TransitionOutcome> {
    this.assertOpen();
    const rows = await this.execute('release', this.settings.sql.release, [
      request.scope,
      request.requestId,
      request.token,
    ]);
    return rows === 1 ? 'ok' : 'lease-lost';
  }

  async inspect(key: RecordId): Promise<IdempotencyRecord | undefined> {
    this.assertOpen();
    const rows = await this.query<RecordRow>('inspect', this.settings.sql.inspect, [
      key.scope,
      key.requestId,
    ]);
    const row = rows[0];
    return row ? recordOf(key, row) : undefined;
  }

  async sweep(batchSize = 1_000): Promise<number> {
    this.assertOpen();
    return this.execute('sweep', this.settings.sql.sweep, [batchSize]);
  }

  stats(): { roundTrips: number } {
    return { roundTrips: this.roundTrips };
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      this.sweeper?.stop();
      await Promise.all(this.settings.ownPools.map((pool) => pool.end().catch(() => undefined)));
    })();
    return this.closing;
  }

  async openTransactionOn(pool: pg.Pool): Promise<StoreTransaction> {
    this.assertOpen();
    this.roundTrips += 1;
    return openRunTransaction(pool, {
      completeSql: this.settings.sql.complete,
      timeoutMs: this.settings.operationTimeoutMs,
      maxResultBytes: this.settings.maxResultBytes,
      prepared: this.settings.preparedStatements,
      completeParams,
      onRoundTrip: () => {
        this.roundTrips += 1;
      },
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  private async execute(operation: string, text: string, values: unknown[]): Promise<number> {
    const result = await this.send(operation, text, values);
    return result.rowCount ?? 0;
  }

  private async query<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<Row[]> {
    const result = await this.send<Row>(operation, text, values);
    return result.rows;
  }

  private async send<Row extends pg.QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    this.roundTrips += 1;
    const timeoutMs = this.settings.operationTimeoutMs;
    try {
      return await withTimeout(
        this.settings.pool.query<Row>(
          timedQuery(text, values, timeoutMs, this.settings.preparedStatements),
        ),
        timeoutMs,
        `PostgreSQL ${operation}`,
      );
    } catch (thrown) {
      throw storeError(thrown, operation);
    }
  }
}

function completeParams(request: CompleteRequest): unknown[] {
  return [
    request.scope,
    request.requestId,
    request.token,
    request.ttlMs,
    resultBytes(request.result),
    request.resultOmitted ?? null,
  ];
}

function resultBytes(result: string | undefined): Buffer | null {
  return result === undefined ? null : Buffer.from(result, 'utf8');
}

/** A record a claim of this batch left live or completed: later claims of its id are read off it. */
type RecordAfterClaim =
  | { kind: 'live'; fingerprint: string | null; attempt: number; leaseMs: number }
  | { kind: 'completed'; fingerprint: string | null; outcome: ClaimOutcome };

function recordAfter(
  outcome: ClaimOutcome,
  fingerprint: string | null,
  leaseMs: number,
): RecordAfterClaim | undefined {
  switch (outcome.status) {
    case 'claimed':
      return { kind: 'live', fingerprint, attempt: outcome.attempt, leaseMs };
    case 'in-progress':
      return { kind: 'live', fingerprint, attempt: outcome.attempt, leaseMs: outcome.retryAfterMs };
    case 'duplicate':
      return { kind: 'completed', fingerprint, outcome };
    default:
      // key-reuse changed nothing and says nothing of the record: the next claim asks.
      return undefined;
  }
}

/** What `claim` answers on a record that stays as it is (live IN_PROGRESS, or COMPLETED). */
function answerFromRecord(record: RecordAfterClaim, request: ClaimRequest): ClaimOutcome {
  if (request.fingerprint && record.fingerprint && request.fingerprint !== record.fingerprint) {
    return { status: 'key-reuse' };
  }
  if (record.kind === 'completed') return { ...record.outcome };
  return { status: 'in-progress', retryAfterMs: record.leaseMs, attempt: record.attempt };
}

function keyOf(id: RecordId): string {
  return `${id.scope.length}:${id.scope}${id.requestId}`;
}

function claimOutcome(row: ClaimRow, token: string): ClaimOutcome | undefined {
  switch (row.status) {
    case 'claimed': {
      const outcome: ClaimOutcome = {
        status: 'claimed',
        token,
        fencingToken: row.fencing_token as number,
        attempt: row.attempt,
        leaseExpiresAt: row.lease_expires_at as number,
      };
      if (row.last_error !== null) outcome.previousError = JSON.parse(row.last_error);
      return outcome;
    }
    case 'duplicate': {
      const outcome: ClaimOutcome = {
        status: 'duplicate',
        completedAt: row.completed_at as number,
      };
      if (row.result !== null) outcome.result = row.result.toString('utf8');
      else if (row.result_omitted !== null) outcome.resultOmitted = row.result_omitted;
      return outcome;
    }
    case 'in-progress':
      return {
        status: 'in-progress',
        retryAfterMs: Math.max(1, row.retry_after_ms ?? 1),
        attempt: row.attempt,
      };
    case 'key-reuse':
      return { status: 'key-reuse' };
    default:
      return undefined;
  }
}

function recordOf(key: RecordId, row: RecordRow): IdempotencyRecord {
  const record: IdempotencyRecord = {
    scope: key.scope,
    requestId: key.requestId,
    state: STATES[row.state],
    attempt: row.attempt,
    fencingToken: row.fencing_token,
    expiresAt: row.expires_at,
  };
  if (row.fingerprint !== null) record.fingerprint = row.fingerprint;
  if (row.state === 'I' && row.lease_expires_at !== null)
    record.leaseExpiresAt = row.lease_expires_at;
  if (row.state === 'C' && row.completed_at !== null) record.completedAt = row.completed_at;
  if (row.last_error !== null) record.lastError = JSON.parse(row.last_error);
  if (row.result !== null) record.result = row.result.toString('utf8');
  if (row.result_omitted !== null) record.resultOmitted = row.result_omitted;
  return record;
}
