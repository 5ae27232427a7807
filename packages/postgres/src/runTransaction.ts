import {
  type CompleteRequest,
  type StoreTransaction,
  StoreUnavailableError,
  type TransitionOutcome,
} from '@idemq/core';
import { assertResultFits } from '@idemq/core/adapter';
import type pg from 'pg';
import { sqlState, storeError } from './errorClassifier.js';
import { timedQuery } from './timedQuery.js';
import { withTimeout } from './withTimeout.js';

export interface RunTransactionSettings {
  completeSql: string;
  completeParams: (request: CompleteRequest) => unknown[];
  timeoutMs: number;
  maxResultBytes: number;
  /** Send the completion as a named prepared statement. */
  prepared: boolean;
  onRoundTrip: () => void;
}

/** Takes a connection and opens `BEGIN` on it for one claimed run. */
export async function openRunTransaction(
  pool: pg.Pool,
  settings: RunTransactionSettings,
): Promise<StoreTransaction> {
  const connecting = pool.connect();
  let client: pg.PoolClient;
  try {
    client = await withTimeout(connecting, settings.timeoutMs, 'PostgreSQL connect');
  } catch (thrown) {
    // A connection that arrives after the timeout goes straight back.
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw storeError(thrown, 'openTransaction');
  }
  // A connection that dies while checked out emits 'error', which the pool does not catch; the
  // failure reaches the run through its next query.
  client.on('error', ignoreError);
  try {
    await withTimeout(client.query('BEGIN'), settings.timeoutMs, 'PostgreSQL BEGIN');
  } catch (thrown) {
    client.off('error', ignoreError);
    client.release(true);
    throw storeError(thrown, 'openTransaction');
  }
  return new RunTransaction(client, settings);
}

/**
 * One run's transaction: the handler writes through `handle`, then `commit` writes the fenced
 * completion and commits both. The connection goes back to the pool when it ends, destroyed
 * when it may be in an unknown state.
 */
class RunTransaction implements StoreTransaction {
  private ended = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly settings: RunTransactionSettings,
  ) {}

  get handle(): pg.PoolClient {
    return this.client;
  }

  async commit(request: CompleteRequest): Promise<TransitionOutcome> {
    // Before anything is written, so the engine may commit again without the result.
    assertResultFits(request.result, this.settings.maxResultBytes);
    if (this.ended) {
      throw new StoreUnavailableError('the run transaction has already ended', { reason: 'other' });
    }
    let completed: number;
    try {
      this.settings.onRoundTrip();
      const result = await this.send(
        this.settings.completeSql,
        this.settings.completeParams(request),
        this.settings.prepared,
      );
      completed = result.rowCount ?? 0;
    } catch (thrown) {
      await this.rollback();
      // The handler's own transaction failed earlier (it caught a database error): its refusal.
      if (sqlState(thrown) === '25P02') throw thrown;
      throw storeError(thrown, 'complete');
    }
    if (completed !== 1) {
      // Fenced: someone took the record over, so neither the completion nor the effects commit.
      await this.rollback();
      return 'lease-lost';
    }
    try {
      this.settings.onRoundTrip();
      await this.send('COMMIT');
    } catch (thrown) {
      this.end(true);
      if (isConnectionFailure(thrown)) {
        throw storeError(thrown, 'commit (its outcome is unknown)');
      }
      // The database answered and refused the commit (a deferred constraint, a serialization
      // failure): everything was rolled back.
      throw thrown;
    }
    this.end(false);
    return 'ok';
  }

  async rollback(): Promise<void> {
    if (this.ended) return;
    try {
      await this.send('ROLLBACK');
      this.end(false);
    } catch {
      this.end(true);
    }
  }

  private send(text: string, values?: unknown[], prepared = false): Promise<pg.QueryResult> {
    const timeoutMs = this.settings.timeoutMs;
    return withTimeout(
      this.client.query(timedQuery(text, values, timeoutMs, prepared)),
      timeoutMs,
      'PostgreSQL transaction',
    );
  }

  private end(destroy: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.client.off('error', ignoreError);
    this.client.release(destroy);
  }
}

function ignoreError(): void {}

/** No answer from the server, or one saying the connection is going away. */
function isConnectionFailure(thrown: unknown): boolean {
  const state = sqlState(thrown);
  return state === undefined || state.startsWith('08') || state.startsWith('57P');
}
