import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomSeed } from '@idemq/core/testing';
import { serviceUrls } from '@idemq/services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FiguresRow, figuresTable, writeFigures } from '../src/figures.js';
import { runScenario } from '../src/runScenario.js';
import { boundedScenario, SCENARIO_IDS, type ScenarioId } from '../src/scenarios.js';
import { StoreServer } from '../src/storeServer.js';
import { TRANSPORT_NAMES } from '../src/transports/spec.js';

/*
 * F01–F07 on every transport, bounded for CI: real consumer processes (in-process for memory),
 * real brokers, the Redis store on a redis-server of the suite's own (F03 restarts it), and the
 * side-effect ledger on 127.0.0.1:6379. Each run must keep every invariant: 0 lost, 0 completed
 * twice, every dead letter accounted for, no handler run without a claim, and no more handler
 * runs than the scenario's execution bound allows for the faults it injected.
 */

/** Every scenario but the soak, which is for the CLI. */
const SCENARIOS = SCENARIO_IDS.filter((id): id is Exclude<ScenarioId, 'soak'> => id !== 'soak');
const seed = Number(process.env.CHAOS_SEED ?? randomSeed());
const urls = serviceUrls();
const rows: FiguresRow[] = [];
let storeServer: StoreServer;

beforeAll(async () => {
  storeServer = await StoreServer.start();
});

afterAll(async () => {
  await storeServer?.destroy();
  if (rows.length === 0) return;
  const out = join(tmpdir(), `idemq-chaos-test-${Date.now().toString(36)}.json`);
  writeFigures(out, `CHAOS_SEED=${seed} pnpm --filter @idemq/chaos test`, rows);
  console.info(`${figuresTable(rows)}\n\nseed ${seed}; figures written to ${out}`);
});

describe.each(TRANSPORT_NAMES)('fault suite on %s with the Redis store', (transport) => {
  const runsOn = (id: ScenarioId) => boundedScenario(id).transports?.includes(transport) ?? true;
  it.each(SCENARIOS.filter(runsOn))('%s keeps every invariant', async (id) => {
    const scenario = boundedScenario(id);
    const { row, report, failures } = await runScenario({
      transport,
      scenario,
      services: urls,
      ledgerUrl: urls.redis,
      storeServer,
      seed,
      timeoutMs: 90_000,
    });
    rows.push(row);
    expect(failures, `seed ${seed}`).toEqual([]);
    expect(report.lost).toEqual([]);
    expect(report.completedTwice).toEqual([]);
    expect(report.unclaimedExecutions).toBe(0);
    expect(report.boundViolations, `seed ${seed}`).toEqual([]);
    expect(row.kills).toBe(scenario.kills);
    expect(row.storeRestarts).toBe(scenario.storeRestarts);
    expect(row.storeKills).toBe(scenario.storeKills);
    expect(row.brokerBreaks).toBe(scenario.brokerBreaks);
    expect(row.brokerRestarts).toBe(scenario.brokerRestarts);
    if (scenario.poison > 0) expect(row.deadLettered).toBeGreaterThanOrEqual(scenario.poison);
    if (scenario.badInputCopies > 0) expect(report.badInputsUnaccounted).toBe(0);
  });
});
