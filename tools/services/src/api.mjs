// @ts-check
// The package's API: ensureServices (for vitest globalSetup and `up`), stopServices (`down`),
// servicesStatus (`status`).
import { DRIVERS } from './drivers.mjs';
import { errorMessage, ServiceError } from './errors.mjs';
import { withLock } from './lock.mjs';
import { ensureDir, serviceDirs } from './paths.mjs';
import { SERVICE_NAMES, serviceUrls } from './urls.mjs';

/** What `up` starts when given no names. */
export const DEFAULT_SERVICES = /** @type {const} */ ([
  'redis',
  'rabbitmq',
  'kafka',
  'sqs',
  'postgres',
]);

/**
 * @typedef {object} ServiceOptions
 * @property {number} [timeoutMs]      readiness budget per started service (default 120 s, or $IDEMQ_SERVICES_TIMEOUT_MS)
 * @property {(message: string) => void} [log]  progress messages (default: stderr)
 * @property {boolean} [allowInstall]  apt-get install missing Redis/RabbitMQ/PostgreSQL as root (default true unless IDEMQ_SERVICES_NO_INSTALL=1)
 */

/**
 * @param {unknown} names
 * @returns {import('./urls.mjs').ServiceName[]}
 */
function validNames(names) {
  if (!Array.isArray(names)) throw new TypeError('service names must be an array');
  /** @type {import('./urls.mjs').ServiceName[]} */
  const valid = [];
  for (const name of names) {
    const match = SERVICE_NAMES.find((known) => known === name);
    if (!match) {
      throw new TypeError(`unknown service "${String(name)}"; known: ${SERVICE_NAMES.join(', ')}`);
    }
    if (!valid.includes(match)) valid.push(match);
  }
  return valid;
}

/**
 * @param {ServiceOptions} options
 * @returns {import('./lifecycle.mjs').Context}
 */
function context(options) {
  const dirs = serviceDirs();
  ensureDir(dirs.run);
  ensureDir(dirs.logs);
  const envTimeout = Number(process.env.IDEMQ_SERVICES_TIMEOUT_MS);
  return {
    dirs,
    urls: serviceUrls(),
    log: options.log ?? ((message) => process.stderr.write(`[services] ${message}\n`)),
    timeoutMs: options.timeoutMs ?? (envTimeout > 0 ? envTimeout : 120_000),
    allowInstall: options.allowInstall ?? process.env.IDEMQ_SERVICES_NO_INSTALL !== '1',
  };
}

/**
 * Makes the named services answer on their addresses: checks those that env vars point
 * elsewhere, uses those already running, starts the rest (in parallel). Rejects with one
 * ServiceError naming every service that could not be provided and what to install.
 * @param {readonly import('./urls.mjs').ServiceName[]} [names]
 * @param {ServiceOptions} [options]
 */
export async function ensureServices(names = DEFAULT_SERVICES, options = {}) {
  const wanted = validNames(names);
  const ctx = context(options);
  const outcomes = await withLock(
    ctx.dirs.run,
    async () => {
      const settled = await Promise.allSettled(wanted.map((name) => DRIVERS[name].ensure(ctx)));
      const failures = settled.flatMap((result, index) =>
        result.status === 'rejected' ? [`- ${wanted[index]}: ${errorMessage(result.reason)}`] : [],
      );
      if (failures.length > 0) {
        throw new ServiceError(
          'services',
          `Could not provide every service:\n${failures.join('\n')}`,
        );
      }
      return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    },
    { onWait: (pid) => ctx.log(`waiting for another services run (pid ${pid}) to finish...`) },
  );
  for (const outcome of outcomes) {
    const seconds = (outcome.ms / 1000).toFixed(1);
    ctx.log(
      `${outcome.service.padEnd(13)} ${outcome.outcome.padEnd(15)} ${outcome.address} (${outcome.detail}; ${seconds} s)`,
    );
  }
  return { ...ctx.urls, outcomes };
}

/**
 * Stops what `up` started (per the pid files) for the named services, or for all of them.
 * Anything else, including a Redis, RabbitMQ or PostgreSQL that was already running, is left
 * alone.
 * @param {readonly import('./urls.mjs').ServiceName[]} [names]
 * @param {ServiceOptions} [options]
 */
export async function stopServices(names = SERVICE_NAMES, options = {}) {
  const wanted = validNames(names);
  const ctx = context(options);
  return withLock(ctx.dirs.run, () =>
    Promise.all(
      wanted.map(async (name) => ({ service: name, stopped: await DRIVERS[name].stop(ctx) })),
    ),
  );
}

/**
 * Whether each named service answers now, and who started it.
 * @param {readonly import('./urls.mjs').ServiceName[]} [names]
 * @param {ServiceOptions} [options]
 */
export function servicesStatus(names = SERVICE_NAMES, options = {}) {
  const wanted = validNames(names);
  const ctx = context(options);
  return Promise.all(wanted.map((name) => DRIVERS[name].status(ctx)));
}
