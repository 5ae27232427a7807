import { randomUUID } from 'node:crypto';
import { type ConsumerEvents, createConsumer, memoryTransport } from '@idemq/core';
import { serviceUrls } from '@idemq/services';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCodes, main } from '../src/cli.js';
import { postgresStoreKit } from '../src/postgres/postgresKit.js';
import { createScenario } from '../src/scenario.js';
import { expectCorrect, lateDuplicates } from './scenarioChecks.js';

// The demo reads POSTGRES_URL; here it is the server globalSetup made sure of.
process.env.POSTGRES_URL ??= serviceUrls().postgres;
const admin = new pg.Pool({ connectionString: process.env.POSTGRES_URL, max: 2 });
afterAll(() => admin.end());

async function schemaExists(table: string): Promise<boolean> {
  const schema = table.split('.')[0];
  const { rowCount } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  return rowCount === 1;
}

describe('the demo scenario with --store postgres (the ledger in the run transaction)', () => {
  it('commits exactly one ledger row per completed payment; crashes after the INSERT leave none', async () => {
    const scenario = createScenario({
      messages: 300,
      duplicates: 0.25,
      consumers: 4,
      seed: 4242,
      timeoutMs: 25_000,
      store: 'postgres',
    });
    const figures = await scenario.run();
    expect(figures.store).toBe('postgres');
    expectCorrect(figures, lateDuplicates(scenario));

    const db = figures.database;
    if (!db) throw new Error('a postgres run reports its ledger table');
    // Counted by the database: one row per completed payment, none for poison.
    expect(db.rows).toBe(figures.completed);
    expect(db.distinctPayments).toBe(db.rows);
    expect(db.mismatched).toBe(0);
    // Every run inserted first; the ones that did not commit took their row with them.
    expect(db.inserted).toBe(figures.handlerRuns);
    const plannedKills = Array.from({ length: 300 }, (_, seq) => seq).filter((seq) =>
      scenario.plan.killsConnection(seq, 1),
    ).length;
    expect(plannedKills).toBeGreaterThan(0);
    expect(db.connectionsKilled).toBe(plannedKills);
    expect(db.failedAfterInsert).toBeGreaterThan(0);
    expect(db.rolledBack).toBe(db.failedAfterInsert + db.connectionsKilled);
    // The run's schema (records and ledger) is gone.
    expect(await schemaExists(db.table)).toBe(false);
  });

  it('prints the ledger counts in the summary and exits 0', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ['--store', 'postgres', '--messages', '200', '--consumers', '3', '--seed', '7'],
      {
        stdout: { write: (chunk: string) => out.push(chunk), isTTY: false },
        stderr: { write: (chunk: string) => err.push(chunk) },
      },
    );
    const text = out.join('');
    expect(err.join('')).toBe('');
    expect(code).toBe(ExitCodes.ok);
    expect(text).toMatch(
      /^idemq demo · transport memory · store postgres · 3 consumers · seed 7$/m,
    );
    expect(text).toMatch(/^ledger: idemq_demo_\w+\.ledger, written in each run's transaction/m);
    expect(text).toMatch(/│ completed +│ +198 │ unique − poison = 198/);
    expect(text).toMatch(/│ ledger rows +│ +198 │ SELECT count\(\*\) FROM ledger/);
    expect(text).toMatch(
      /│ distinct payments +│ +198 │ count\(DISTINCT payment_id\) = rows = completed: ok/,
    );
    expect(text).toMatch(
      /│ runs rolled back +│ +[1-9]\d* │ \d+ threw after their INSERT · [1-9]\d* connections killed before COMMIT +│/,
    );
    expect(text).toMatch(/│ processed twice +│ +0 │ must be 0: ok/);
    expect(text).toMatch(
      /^OK: one ledger row per payment, committed with its completion; poison dead-lettered, nothing lost\.$/m,
    );
  });
});

describe('negative control: the ledger check catches a row written outside the transaction', () => {
  /**
   * One payment whose first run writes its row and then fails, the second succeeds. Written
   * through `ctx.transaction`, the first row rolls back; through a connection of its own, it
   * stays, and the counts the summary checks (rows = distinct payments, see summary.test.ts)
   * disagree.
   */
  async function chargeOnceAfterAFailure(through: 'transaction' | 'own connection') {
    const kit = postgresStoreKit();
    const outside = new pg.Client({ connectionString: process.env.POSTGRES_URL });
    await outside.connect();
    const transport = memoryTransport();
    try {
      await kit.ready();
      const consumer = createConsumer<{ paymentId: string }, void>({
        transport,
        store: kit.store,
        source: 'payments',
        scope: 'billing',
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
        handler: async (message, ctx) => {
          const row = {
            paymentId: message.value.paymentId,
            requestId: ctx.requestId,
            account: 'acct_1',
            amountCents: 500,
            attempt: ctx.attempt,
          };
          if (through === 'transaction') await kit.ledger.charge(ctx, row);
          else await kit.ledger.charge({ transaction: outside as pg.PoolClient }, row);
          if (ctx.attempt === 1) throw new Error('gateway timeout after the INSERT');
        },
      });
      const processed = new Promise<ConsumerEvents['processed']>((resolve) =>
        consumer.on('processed', resolve),
      );
      await consumer.start();
      await transport.publish('payments', {
        requestId: randomUUID(),
        body: { paymentId: 'pay_000001' },
      });
      expect((await processed).attempt).toBe(2);
      await consumer.stop();
      return await kit.ledger.count();
    } finally {
      await outside.end();
      await transport.close();
      await kit.close();
    }
  }

  it('one row through ctx.transaction', async () => {
    expect(await chargeOnceAfterAFailure('transaction')).toMatchObject({
      rows: 1,
      distinctPayments: 1,
    });
  });

  it('two rows for one payment through another connection: rows ≠ distinct payments', async () => {
    expect(await chargeOnceAfterAFailure('own connection')).toMatchObject({
      rows: 2,
      distinctPayments: 1,
    });
  });
});
