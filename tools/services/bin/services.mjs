#!/usr/bin/env node
// @ts-check
// services up|down|status [service...] [--cluster]: the no-Docker way to run Redis, RabbitMQ,
// Kafka, SQS (ElasticMQ) and PostgreSQL on 127.0.0.1. See docs/services.md.
import {
  DEFAULT_SERVICES,
  ensureServices,
  SERVICE_NAMES,
  servicesStatus,
  stopServices,
} from '../src/index.mjs';
import { describeAddress, ENV_BY_SERVICE } from '../src/urls.mjs';

const USAGE = `usage: services.mjs <up|down|status> [service...] [--cluster] [--check]

  up      start what is missing (default: ${DEFAULT_SERVICES.join(', ')}; --cluster adds redis-cluster)
  down    stop what \`up\` started (pid files in .services/run); leaves anything else running
  status  probe each service and tell who runs it (--check: exit 1 unless all are ready)

services: ${SERVICE_NAMES.join(', ')}`;

/**
 * @param {readonly string[]} argv
 */
function parse(argv) {
  const [command, ...rest] = argv;
  const flags = new Set(rest.filter((arg) => arg.startsWith('-')));
  const names = rest.filter((arg) => !arg.startsWith('-'));
  for (const flag of flags) {
    if (!['--cluster', '--check', '--help', '-h'].includes(flag))
      throw new Error(`unknown option ${flag}`);
  }
  /** @type {import('../src/urls.mjs').ServiceName[]} */
  const services = [];
  for (const name of names) {
    const known = SERVICE_NAMES.find((candidate) => candidate === name);
    if (!known) throw new Error(`unknown service "${name}"`);
    services.push(known);
  }
  return { command, services, flags };
}

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * @param {import('../src/urls.mjs').ServiceName[]} services
 * @param {boolean} cluster
 */
async function up(services, cluster) {
  const wanted = services.length > 0 ? services : [...DEFAULT_SERVICES];
  if (cluster && !wanted.includes('redis-cluster')) wanted.push('redis-cluster');
  const began = Date.now();
  const result = await ensureServices(wanted);
  console.log(`ready in ${seconds(Date.now() - began)}:`);
  for (const name of wanted)
    console.log(`  ${ENV_BY_SERVICE[name]}=${describeAddress(name, result)}`);
}

/** @param {import('../src/urls.mjs').ServiceName[]} services */
async function down(services) {
  const results = await stopServices(services.length > 0 ? services : SERVICE_NAMES);
  let count = 0;
  for (const { service, stopped } of results) {
    for (const { id, outcome, pid } of stopped) {
      count += 1;
      console.log(`${service.padEnd(13)} ${id.padEnd(20)} pid ${pid}: ${outcome}`);
    }
  }
  if (count === 0)
    console.log('nothing to stop: no process started by `up` is recorded in .services/run');
}

/**
 * @param {import('../src/urls.mjs').ServiceName[]} services
 * @param {boolean} cluster
 * @param {boolean} check
 */
async function status(services, cluster, check) {
  const statuses = await servicesStatus(services.length > 0 ? services : SERVICE_NAMES);
  // An unused cluster is noise unless asked for.
  const shown = statuses.filter(
    (item) =>
      services.length > 0 ||
      cluster ||
      item.service !== 'redis-cluster' ||
      item.ready ||
      item.pids.length > 0,
  );
  const width = Math.max(40, ...shown.map((item) => item.address.length + 1));
  for (const item of shown) {
    const state = item.ready ? 'ready' : 'DOWN';
    const version = item.version ? `, ${item.version}` : '';
    console.log(
      `${item.service.padEnd(13)} ${state.padEnd(5)} ${item.address.padEnd(width)} ${item.managedBy}${version}`,
    );
    if (item.error) console.log(`${' '.repeat(20)}(${item.error})`);
  }
  if (check && shown.some((item) => !item.ready)) process.exitCode = 1;
}

async function main() {
  const { command, services, flags } = parse(process.argv.slice(2));
  if (flags.has('--help') || flags.has('-h') || command === undefined) {
    console.log(USAGE);
    return;
  }
  const cluster = flags.has('--cluster');
  if (command === 'up') await up(services, cluster);
  else if (command === 'down') await down(services);
  else if (command === 'status') await status(services, cluster, flags.has('--check'));
  else throw new Error(`unknown command "${command}"`);
}

main().catch((/** @type {unknown} */ error) => {
  console.error(error instanceof Error ? error.message : String(error));
  if (error instanceof TypeError || (error instanceof Error && /^unknown /.test(error.message))) {
    console.error(`\n${USAGE}`);
  }
  process.exitCode = 1;
});
