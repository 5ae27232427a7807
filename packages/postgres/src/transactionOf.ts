import { type HandlerContext, InvalidOptionsError } from '@idemq/core';
import type { PoolClient } from 'pg';

/**
 * The run's transaction client (`ctx.transaction`), or a usage error when the store is not in
 * its transactional mode: writes that were meant to commit with the completion never go
 * through another connection by mistake.
 */
export function transactionOf(ctx: Pick<HandlerContext, 'transaction'>): PoolClient {
  const transaction = ctx.transaction as PoolClient | undefined;
  if (transaction === undefined) {
    throw new InvalidOptionsError('postgresStore', [
      'ctx.transaction is absent: create the store with postgresStore({ ..., transactions: true })',
    ]);
  }
  return transaction;
}
