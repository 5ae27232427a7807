import type { PoolClient } from 'pg';

declare module '@idemq/core' {
  /** With `postgresStore({ transactions })`, `ctx.transaction` is the run's `pg` client. */
  interface TransactionTypes {
    transaction: PoolClient;
  }
}
