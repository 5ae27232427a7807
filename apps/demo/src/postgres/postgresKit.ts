/**
 * `--store postgres`: the records in PostgreSQL with `postgresStore({ transactions })`, and the
 * ledger there too, as a table the handler inserts into through `ctx.transaction`: each charge
 * commits in the same transaction as its COMPLETED mark, or not at all.
 */
import { randomBytes } from 'node:crypto';
import type { HandlerContext } from '@idemq/core';
import { migrate, postgresStore, transactionOf } from '@idemq/postgres';
import pg from 'pg';
import type { StoreKit, StoreKitOptions } from '../adapters.js';

/** POSTGRES_URL when set (as in `@idemq/services`), else the local server without a password. */
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Most connections for run transactions. Each running handler holds one: 40 covers the default
 * 4 consumers × 10 handlers; with more, a run waits its turn for a connection.
 */
const MAX_TRANSACTION_CONNECTIONS = 40;
/** Connections for claims, lease renewals and releases, and the demo's own queries. */
const RECORD_CONNECTIONS = 10;
/** A connection not made by then fails (a blackholed address must not hang the demo). */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long a killed connection may take to close before the handler stops waiting. */
const KILL_WAIT_MS = 5_000;

/** One ledger row: a payment charged. */
export interface LedgerCharge {
  paymentId: string;
  requestId: string;
  account: string;
  amountCents: number;
  attempt: number;
}

/** The ledger table counted by the database at the end of the run. */
export interface LedgerCount {
  /** `SELECT count(*)`. */
  rows: number;
  /** `count(DISTINCT payment_id)`. */
  distinctPayments: number;
  /** Rows per request id, to check each one against the run's completions. */
  rowsByRequestId: ReadonlyMap<string, number>;
}

/** The ledger a transactional store keeps beside its records. */
export interface DatabaseLedger {
  /** The table, `schema.name`, as the summary names it. */
  readonly table: string;
  /** Inserts the charge through the run's transaction (`ctx.transaction`), never another connection. */
  charge(ctx: Pick<HandlerContext, 'transaction'>, charge: LedgerCharge): Promise<void>;
  /**
   * Terminates the run's connection from another one, as the operating system closes a crashed
   * consumer's socket; resolves once the run's client has seen its connection close. The server
   * then rolls the transaction back by itself: no ROLLBACK is ever sent.
   */
  killConnection(ctx: Pick<HandlerContext, 'transaction'>): Promise<void>;
  count(): Promise<LedgerCount>;
}

/** The store kit of `--store postgres`: both tables in a schema of their own, dropped on close. */
export function postgresStoreKit(
  options: StoreKitOptions = {},
): StoreKit & { ledger: DatabaseLedger; ready(): Promise<void> } {
  const url = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL;
  // One schema per run: no record or ledger row of an earlier run is seen by this one.
  const schema = `idemq_demo_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const recordsTable = `${schema}.idemq_records`;
  const ledgerTable = `"${schema}".ledger`;
  const connection = { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
  const records = new pg.Pool({ ...connection, max: RECORD_CONNECTIONS });
  const transactionConnections = Math.min(
    options.concurrentRuns ?? MAX_TRANSACTION_CONNECTIONS,
    MAX_TRANSACTION_CONNECTIONS,
  );
  const transactions = new pg.Pool({ ...connection, max: transactionConnections });
  // An idle connection that dies (a server restart) must not crash the demo.
  for (const pool of [records, transactions]) pool.on('error', () => {});
  const store = postgresStore({
    pool: records,
    table: recordsTable,
    transactions: { pool: transactions },
  });
  let schemaCreated = false;

  const ledger: DatabaseLedger = {
    table: `${schema}.ledger`,
    async charge(ctx, charge) {
      await transactionOf(ctx).query(
        `INSERT INTO ${ledgerTable} (payment_id, request_id, account, amount_cents, attempt)
         VALUES ($1, $2, $3, $4, $5)`,
        [charge.paymentId, charge.requestId, charge.account, charge.amountCents, charge.attempt],
      );
    },
    async killConnection(ctx) {
      const client = transactionOf(ctx);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // The store listens to the client's 'error' (the server's FATAL) while the run is open; the
      // run sees the failure through its next query, the ROLLBACK the engine sends.
      let timer: NodeJS.Timeout | undefined;
      const closed = new Promise<void>((resolve, reject) => {
        client.once('end', () => resolve());
        timer = setTimeout(
          () => reject(new Error(`the killed connection did not close within ${KILL_WAIT_MS} ms`)),
          KILL_WAIT_MS,
        );
      });
      try {
        await records.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
        await closed;
      } finally {
        clearTimeout(timer);
      }
    },
    async count() {
      const totals = await records.query<{ rows: number; payments: number }>(
        `SELECT count(*)::int AS rows, count(DISTINCT payment_id)::int AS payments FROM ${ledgerTable}`,
      );
      const perRequest = await records.query<{ request_id: string; rows: number }>(
        `SELECT request_id, count(*)::int AS rows FROM ${ledgerTable} GROUP BY request_id`,
      );
      return {
        rows: totals.rows[0]?.rows ?? 0,
        distinctPayments: totals.rows[0]?.payments ?? 0,
        rowsByRequestId: new Map(perRequest.rows.map((row) => [row.request_id, row.rows])),
      };
    },
  };

  return {
    name: 'postgres',
    store,
    ledger,
    async ready() {
      try {
        await records.query(`CREATE SCHEMA "${schema}"`);
      } catch (error) {
        throw new Error(
          `PostgreSQL at ${redacted(url)} did not answer (pnpm services:up postgres starts one, ` +
            `POSTGRES_URL points elsewhere): ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      schemaCreated = true;
      await migrate(records, { table: recordsTable });
      // No unique constraint on payment_id, on purpose: a second row for a payment must be
      // possible, so that one row each proves the shared transaction, not a constraint.
      await records.query(`CREATE TABLE ${ledgerTable} (
        payment_id   text        NOT NULL,
        request_id   text        NOT NULL,
        account      text        NOT NULL,
        amount_cents integer     NOT NULL,
        attempt      integer     NOT NULL,
        charged_at   timestamptz NOT NULL DEFAULT now()
      )`);
      await store.ready();
      // Opened now rather than by the first runs, which would wait for them on the clock of the
      // store's operation timeout. Every one that was made goes back, even when another failed:
      // a client never released would keep the pool's end() waiting forever.
      const warm = await Promise.allSettled(
        Array.from({ length: transactionConnections }, () => transactions.connect()),
      );
      let refused: unknown;
      for (const outcome of warm) {
        if (outcome.status === 'fulfilled') outcome.value.release();
        else refused ??= outcome.reason;
      }
      if (refused !== undefined) {
        throw new Error(
          `PostgreSQL refused one of the ${transactionConnections} connections for run ` +
            `transactions: ${refused instanceof Error ? refused.message : String(refused)}`,
          { cause: refused },
        );
      }
    },
    async close() {
      try {
        await store.close();
        if (schemaCreated) await records.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await Promise.all([records.end(), transactions.end()]);
      }
    },
  };
}

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'POSTGRES_URL';
  }
}
