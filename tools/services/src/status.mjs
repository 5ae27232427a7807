// @ts-check
// What `status` reports for one service: does it answer, and did `up` start it.
import { errorMessage } from './errors.mjs';
import { isRunning, readPidFile } from './pidfile.mjs';
import { ENV_BY_SERVICE, isExternal } from './urls.mjs';

/**
 * @typedef {object} ServiceStatus
 * @property {import('./urls.mjs').ServiceName} service
 * @property {string} address
 * @property {boolean} ready       answered a real request just now
 * @property {string} managedBy    who runs it, as far as we can tell
 * @property {number[]} pids       processes that `up` started and that still run
 * @property {string} [version]
 * @property {string} [error]      why it is not ready
 */

/**
 * @param {import('./lifecycle.mjs').Context} ctx
 * @param {{ service: import('./urls.mjs').ServiceName, address: string, probe: () => Promise<unknown>, ids: readonly string[] }} spec
 * @returns {Promise<ServiceStatus>}
 */
export async function statusOf(ctx, spec) {
  /** @type {import('./pidfile.mjs').PidRecord[]} */
  const live = [];
  for (const id of spec.ids) {
    const record = readPidFile(ctx.dirs.run, id);
    if (record && isRunning(record)) live.push(record);
  }
  const pids = live.map((record) => record.pid);
  const version = live.find((record) => record.version)?.version;
  /** @type {string | undefined} */
  let error;
  try {
    await spec.probe();
  } catch (caught) {
    error = errorMessage(caught);
  }
  let managedBy = 'not started by services.mjs';
  if (isExternal(spec.service)) managedBy = `elsewhere (${ENV_BY_SERVICE[spec.service]})`;
  else if (pids.length > 0) managedBy = `services.mjs (pid ${pids.join(', ')})`;
  else if (error !== undefined) managedBy = '-';
  return {
    service: spec.service,
    address: spec.address,
    ready: error === undefined,
    managedBy,
    pids,
    ...(version ? { version } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}
