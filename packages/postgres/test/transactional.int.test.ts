import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createIdempotency } from '@idemq/core';
import { RABBITMQ_DEFAULTS, rabbitmq } from '@idemq/rabbitmq';
import { serviceUrls } from '@idemq/services';
import amqp from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStore, transactionOf } from '../src/index.js';
import type { LedgerWorkerConfig } from './fixtures/ledgerWorker.js';
import { closeTestPool, freshTable, postgresUrl, scratchTable, testPool } from './helpers.js';

/*
 * The transactional mode on real processes: the handler's ledger row and the COMPLETED mark
 * commit together, so a process killed between them leaves neither, a zombie cannot commit, and
 * a storm of duplicates over 8 processes leaves each row exactly once — counted in the database.
 */

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const amqpUrl = serviceUrls().amqp;
const pool = testPool(20);
const children: ChildProcess[] = [];
/** Queues the consumers declared, deleted at the end: the broker is shared with other suites. */
const queues: string[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await closeTestPool(pool);
  const connection = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  for (const queue of queues) {
    const names = [
      queue,
      `${queue}.dlq`,
      ...RABBITMQ_DEFAULTS.retryTiersMs.map((ms) => `${queue}.retry.${ms}`),
    ];
    for (const name of names) await channel.deleteQueue(name);
  }
  await connection.close();
});

/** A queue name of this suite, deleted with its dead-letter and retry queues at the end. */
function queueName(prefix: string): string {
  const queue = `${prefix}-${randomUUID().slice(0, 8)}`;
  queues.push(queue);
  return queue;
}

interface Setup {
  table: string;
  ledger: string;
  scope: string;
}

async function setup(): Promise<Setup> {
  const table = await freshTable(pool);
  // No unique key: a payment applied twice shows as two rows.
  const ledger = await scratchTable(
    pool,
    'ledger',
    'payment_id text NOT NULL, worker int NOT NULL, attempt int NOT NULL',
  );
  return { table, ledger, scope: `s-${randomUUID().slice(0, 8)}` };
}

/** Starts a worker; `line(prefix)` resolves with the first stdout line starting with it. */
function startWorker(config: LedgerWorkerConfig) {
  const child = spawn(
    process.execPath,
    ['--import', '@idemq/services/register-ts', 'ledgerWorker.ts'],
    {
      cwd: fixtures,
      env: { ...process.env, IDEMQ_LEDGER_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).on(
    'line',
    (text) => {
      lines.push(text);
      for (const wake of waiters.splice(0)) wake();
    },
  );
  const line = (prefix: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const look = () => {
        const found = lines.find((text) => text.startsWith(prefix));
        if (found !== undefined) return resolve(found);
        if (child.exitCode !== null) return reject(new Error(`worker exited (${child.exitCode})`));
        waiters.push(look);
      };
      child.once('exit', look);
      look();
    });
  const killed = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  return { child, line, killed };
}

async function ledgerRows(ledger: string): Promise<Array<{ payment_id: string; attempt: number }>> {
  const { rows } = await pool.query(
    `SELECT payment_id, attempt FROM ${ledger} ORDER BY payment_id`,
  );
  return rows;
}

async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const base = (s: Setup, worker: number): LedgerWorkerConfig => ({
  mode: 'run',
  postgresUrl,
  ...s,
  leaseMs: 1_000,
  worker,
});

/**
 * A worker SIGKILLed between its ledger insert and the commit, then the id run again here until
 * processed: resolves the ledger rows. `plain` writes without the transaction (the negative
 * control: the guarantee is the transaction's, and without it the checker sees two rows).
 */
async function killBeforeCommitThenRetry(s: Setup, plain: boolean) {
  const worker = startWorker({ ...base(s, 1), ids: ['pay-1'], hangOn: 'pay-1', plain });
  await worker.line('inserted pay-1');
  await worker.killed();
  const store = postgresStore({ pool, table: s.table, transactions: true });
  expect(await store.inspect({ scope: s.scope, requestId: 'pay-1' })).toMatchObject({
    state: 'IN_PROGRESS',
    attempt: 1,
  });
  const idempotency = createIdempotency({ store, scope: s.scope, leaseMs: 1_000 });
  const pay = () =>
    idempotency.run('pay-1', async (ctx) => {
      await transactionOf(ctx).query(
        `INSERT INTO ${s.ledger} (payment_id, worker, attempt) VALUES ('pay-1', 0, $1)`,
        [ctx.attempt],
      );
      return 'paid';
    });
  let outcome = await pay();
  while (outcome.status === 'in-progress') {
    await new Promise((resolve) =>
      setTimeout(resolve, outcome.status === 'in-progress' ? outcome.retryAfterMs : 0),
    );
    outcome = await pay();
  }
  expect(outcome).toMatchObject({ status: 'processed', attempt: 2 });
  expect(await pay()).toMatchObject({ status: 'duplicate' });
  await store.close();
  return ledgerRows(s.ledger);
}

describe('transactional mode, run(): a process SIGKILLed before its commit', () => {
  it('leaves no ledger row and no completion; the retry inserts exactly one row', async () => {
    const s = await setup();
    expect(await killBeforeCommitThenRetry(s, false)).toEqual([
      { payment_id: 'pay-1', attempt: 2 },
    ]);
  });

  it('negative control: written outside the transaction, the killed attempt’s row stays and the checker sees two', async () => {
    const s = await setup();
    expect(await killBeforeCommitThenRetry(s, true)).toEqual([
      { payment_id: 'pay-1', attempt: 1 },
      { payment_id: 'pay-1', attempt: 2 },
    ]);
  });

  it('the inserted row is invisible from outside until the commit', async () => {
    const s = await setup();
    const worker = startWorker({ ...base(s, 1), ids: ['pay-1'], hangOn: 'pay-1' });
    await worker.line('inserted pay-1');
    expect(await ledgerRows(s.ledger)).toEqual([]);
    await worker.killed();
    expect(await ledgerRows(s.ledger)).toEqual([]);
  });
});

describe('transactional mode, RabbitMQ consumer: a process SIGKILLed before its commit', () => {
  it('another consumer applies every payment exactly once, the killed one included', async () => {
    const s = await setup();
    const queue = queueName('pgtx');
    const consumerConfig = (worker: number): LedgerWorkerConfig => ({
      ...base(s, worker),
      mode: 'consumer',
      amqpUrl,
      queue,
    });
    const first = startWorker({ ...consumerConfig(1), hangOn: 'pay-3' });
    await first.line('ready');
    const transport = rabbitmq({ url: amqpUrl, queueType: 'classic' });
    const ids = Array.from({ length: 10 }, (_, i) => `pay-${i}`);
    for (const requestId of ids) await transport.publish(queue, { requestId, body: { requestId } });
    await first.line('inserted pay-3');
    await first.killed();

    const second = startWorker(consumerConfig(2));
    await second.line('ready');
    await waitFor(
      async () => (await ledgerRows(s.ledger)).length >= ids.length,
      20_000,
      'every payment',
    );
    // A little longer: a second row for any payment would show up now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rows = await ledgerRows(s.ledger);
    expect(rows.map((row) => row.payment_id).sort()).toEqual([...ids].sort());
    expect(rows.find((row) => row.payment_id === 'pay-3')?.attempt).toBe(2);
    await second.killed();
    await transport.close();
  });
});

/** A zombie (no heartbeat, lease lapsed) whose record is taken over mid-run: the ledger's writers. */
async function zombieAndSuccessor(s: Setup, plain: boolean): Promise<number[]> {
  const store = postgresStore({ pool, table: s.table, transactions: true });
  const insert = (ctx: Parameters<typeof transactionOf>[0], who: number) =>
    (plain && who === 1 ? pool : transactionOf(ctx)).query(
      `INSERT INTO ${s.ledger} (payment_id, worker, attempt) VALUES ('z', $1, 1)`,
      [who],
    );
  const zombie = createIdempotency({ store, scope: s.scope, leaseMs: 300, heartbeat: false });
  const successor = createIdempotency({ store, scope: s.scope, leaseMs: 5_000 });
  const zombieRun = zombie.run('z', async (ctx) => {
    await insert(ctx, 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const takeover = await successor.run('z', async (next) => {
      await insert(next, 2);
      return 'second';
    });
    expect(takeover).toMatchObject({ status: 'processed', attempt: 2 });
    return 'first';
  });
  expect(await zombieRun).toMatchObject({ status: 'lease-lost', attempt: 1, result: 'first' });
  await store.close();
  const { rows } = await pool.query(`SELECT worker FROM ${s.ledger} ORDER BY worker`);
  return rows.map((row) => row.worker as number);
}

describe('transactional mode: a zombie past its lease', () => {
  it('cannot commit once another owner took the record over: only the new owner’s row exists', async () => {
    expect(await zombieAndSuccessor(await setup(), false)).toEqual([2]);
  });

  it('negative control: a zombie writing outside the transaction leaves its row beside the new owner’s', async () => {
    expect(await zombieAndSuccessor(await setup(), true)).toEqual([1, 2]);
  });
});

describe('transactional mode: a duplicate storm over 8 processes', () => {
  const PAYMENTS = 150;
  const ids = Array.from({ length: PAYMENTS }, (_, i) => `storm-${i}`);

  async function expectEachOnce(ledger: string) {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS total, count(DISTINCT payment_id)::int AS distinct FROM ${ledger}`,
    );
    expect(rows[0]).toEqual({ total: PAYMENTS, distinct: PAYMENTS });
  }

  it('run(): every process runs every id; each ledger row exists exactly once', async () => {
    const s = await setup();
    const workers = Array.from({ length: 8 }, (_, worker) =>
      startWorker({ ...base(s, worker), ids: [...ids].sort(() => Math.random() - 0.5) }),
    );
    await Promise.all(workers.map((worker) => worker.line('done')));
    await expectEachOnce(s.ledger);
  }, 60_000);

  it('RabbitMQ: every payment published 3 times to 8 consumers; each ledger row exactly once', async () => {
    const s = await setup();
    const queue = queueName('pgstorm');
    const workers = Array.from({ length: 8 }, (_, worker) =>
      startWorker({ ...base(s, worker), mode: 'consumer', amqpUrl, queue }),
    );
    await Promise.all(workers.map((worker) => worker.line('ready')));
    const transport = rabbitmq({ url: amqpUrl, queueType: 'classic' });
    for (let copy = 0; copy < 3; copy += 1) {
      for (const requestId of ids)
        await transport.publish(queue, { requestId, body: { requestId } });
    }
    await waitFor(
      async () => (await ledgerRows(s.ledger)).length >= PAYMENTS,
      30_000,
      'every payment',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expectEachOnce(s.ledger);
    await Promise.all(workers.map((worker) => worker.killed()));
    await transport.close();
  }, 60_000);
});
