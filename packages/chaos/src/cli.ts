#!/usr/bin/env node
/**
 * `pnpm chaos --transport kafka --scenario soak --messages 100000 --minutes 30`
 *
 * Runs fault scenarios against real brokers with the Redis store, prints the figures table and
 * writes it as JSON (`--out`, default `results/chaos-<transport>-<time>.json`). Exits 1 when an
 * invariant broke, 2 on bad arguments.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomSeed } from '@idemq/core/testing';
import { ensureServices, serviceUrls } from '@idemq/services';
import { figuresTable, writeFigures } from './figures.js';
import { runScenario } from './runScenario.js';
import { boundedScenario, SCENARIO_IDS } from './scenarios.js';
import { StoreServer } from './storeServer.js';
import { TRANSPORT_NAMES, type TransportName } from './transports/spec.js';

const USAGE = `usage: chaos [--transport memory|rabbitmq|kafka|sqs|all] [--scenario F01|…|soak|all]
             [--messages N] [--minutes M] [--consumers N] [--kills N] [--fault-every SECONDS]
             [--seed S] [--out file.json]`;

async function main(): Promise<number> {
  let values: ReturnType<typeof parse>;
  try {
    values = parse();
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const transports = pick(values.transport, TRANSPORT_NAMES, 'transport');
  const scenarios = pick(values.scenario, SCENARIO_IDS, 'scenario');
  if (!transports || !scenarios) {
    console.error(USAGE);
    return 2;
  }
  const minutes = Number(values.minutes);
  const seed = values.seed === undefined ? randomSeed() : Number(values.seed);
  await ensureServices(['redis', ...serviceNames(transports)]);
  const urls = serviceUrls();
  const storeServer = await StoreServer.start();
  const rows = [];
  let failed = false;
  // Ctrl-C: the run in progress stops and removes its queues, topics and keys; twice: quit now.
  const interrupt = new AbortController();
  process.once('SIGINT', () => {
    console.error('[chaos] interrupted: removing what the run created (Ctrl-C again to quit now)');
    interrupt.abort(new Error('interrupted'));
    process.once('SIGINT', () => process.exit(130));
  });
  try {
    for (const transport of transports) {
      for (const id of scenarios) {
        const scenario = { ...boundedScenario(id) };
        if (scenario.transports && !scenario.transports.includes(transport)) {
          console.error(`[chaos] ${transport} ${id}: skipped, runs on ${scenario.transports}`);
          continue;
        }
        if (values.messages !== undefined) scenario.messages = Number(values.messages);
        if (values.consumers !== undefined) scenario.consumers = Number(values.consumers);
        if (values.kills !== undefined) scenario.kills = Number(values.kills);
        if (values['fault-every'] !== undefined) {
          scenario.faultEveryMs = Number(values['fault-every']) * 1_000;
        }
        const result = await runScenario({
          transport,
          scenario,
          services: urls,
          ledgerUrl: urls.redis,
          storeServer,
          seed,
          timeoutMs: minutes * 60_000,
          log: (line) => console.error(`[chaos] ${line}`),
          signal: interrupt.signal,
        });
        rows.push(result.row);
        for (const failure of result.failures) console.error(`[chaos] FAIL ${failure}`);
        failed ||= result.failures.length > 0;
        console.log(figuresTable([result.row]));
      }
    }
  } catch (error) {
    if (!interrupt.signal.aborted) throw error;
    console.error('[chaos] interrupted: cleaned up; no figures written');
    return 130;
  } finally {
    await storeServer.destroy();
  }
  const packageDir = fileURLToPath(new URL('..', import.meta.url));
  const out =
    values.out ??
    join(packageDir, 'results', `chaos-${transports.join('-')}-${Date.now().toString(36)}.json`);
  const command = `pnpm chaos ${process.argv.slice(2).join(' ')}`;
  writeFigures(out, command, rows);
  console.log(`\n${figuresTable(rows)}\n\nseed ${seed}; figures written to ${out}`);
  return failed ? 1 : 0;
}

function parse() {
  const { values } = parseArgs({
    options: {
      transport: { type: 'string', default: 'all' },
      scenario: { type: 'string', default: 'all' },
      messages: { type: 'string' },
      minutes: { type: 'string', default: '10' },
      consumers: { type: 'string' },
      kills: { type: 'string' },
      'fault-every': { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
  });
  for (const name of [
    'messages',
    'minutes',
    'consumers',
    'kills',
    'fault-every',
    'seed',
  ] as const) {
    const value = values[name];
    if (value !== undefined && !(Number.isFinite(Number(value)) && Number(value) > 0)) {
      throw new Error(`--${name} must be a positive number, got '${value}'`);
    }
  }
  return values;
}

function pick<T extends string>(value: string, all: readonly T[], name: string): T[] | undefined {
  if (value === 'all') return name === 'scenario' ? all.filter((s) => s !== 'soak') : [...all];
  const chosen = value.split(',');
  const unknown = chosen.filter((v) => !all.includes(v as T));
  if (unknown.length > 0) {
    console.error(`unknown --${name} ${unknown.join(',')}; choose from ${all.join(', ')}, all`);
    return undefined;
  }
  return chosen as T[];
}

function serviceNames(transports: readonly TransportName[]) {
  const map = { rabbitmq: 'rabbitmq', kafka: 'kafka', sqs: 'sqs' } as const;
  return transports.flatMap((t) => (t === 'memory' ? [] : [map[t]]));
}

// Exit explicitly: a simulated crash leaves its (frozen) connections behind on purpose.
process.exit(await main());
