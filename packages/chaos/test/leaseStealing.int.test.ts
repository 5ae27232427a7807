import { memoryStore } from '@idemq/core';
import { randomSeed } from '@idemq/core/testing';
import { serviceUrls } from '@idemq/services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../src/runScenario.js';
import { boundedScenario } from '../src/scenarios.js';
import { StoreServer } from '../src/storeServer.js';
import { leaseStealingStore } from './leaseStealingStore.js';

/*
 * The negative control of the execution bound: F01 on the memory transport with a store that
 * takes over live leases must fail, though no id is lost or completed twice (the fenced ledger
 * absorbs every replay). The same run with core's memory store passes, so the failure is the
 * store's. The ledger is the Redis on 127.0.0.1:6379, hence an integration test.
 */

const seed = Number(process.env.CHAOS_SEED ?? randomSeed());
const urls = serviceUrls();
let storeServer: StoreServer;

beforeAll(async () => {
  // Required by every run; these consumers use the in-process store instead.
  storeServer = await StoreServer.start();
});

afterAll(async () => {
  await storeServer?.destroy();
});

const runF01 = (openStore: Parameters<typeof runScenario>[0]['openStore']) =>
  runScenario({
    transport: 'memory',
    scenario: boundedScenario('F01'),
    services: urls,
    ledgerUrl: urls.redis,
    storeServer,
    openStore,
    seed,
    timeoutMs: 60_000,
  });

describe('F01 execution bound on the memory transport', () => {
  it('passes with core memory store shared by the consumers', async () => {
    const shared = memoryStore();
    try {
      const { report, failures } = await runF01(() => ({
        ...shared,
        close: async () => undefined,
      }));
      expect(failures, `seed ${seed}`).toEqual([]);
      expect(report.executions).toBe(report.completions);
    } finally {
      await shared.close();
    }
  });

  it('fails with a store that steals live leases, on the bound alone', async () => {
    const stealing = leaseStealingStore();
    try {
      const { report, failures } = await runF01(stealing.open);
      expect(stealing.steals, `seed ${seed}`).toBeGreaterThan(0);
      // What the fenced ledger absorbs: nothing lost or completed twice, every run under a claim.
      expect(report.lost).toEqual([]);
      expect(report.completedTwice).toEqual([]);
      expect(report.unclaimedExecutions).toBe(0);
      // What only the bound sees: handlers ran again with no fault to explain it.
      expect(report.healthyExecutions).toBeGreaterThan(report.healthyCompletions);
      expect(report.boundViolations).toEqual([
        expect.stringMatching(/^re-execution bound \(executions = completions\): /),
      ]);
      expect(report.ok).toBe(false);
      expect(failures.join('\n')).toContain('re-execution bound');
    } finally {
      await stealing.close();
    }
  });
});
