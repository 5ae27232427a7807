// @ts-check
// The decision every service goes through on `up`: pointed elsewhere by env -> only check it;
// started by us earlier -> wait for it; something already answers -> use it; the port is taken
// by something else -> fail; else start it and wait until it answers a real request.
import { ServiceError } from './errors.mjs';
import { isRunning, readPidFile, removePidFile, stopRecorded } from './pidfile.mjs';
import { isPortOpen } from './probes/socket.mjs';
import { waitUntilReady } from './readiness.mjs';
import { ENV_BY_SERVICE, isExternal } from './urls.mjs';

/**
 * @typedef {object} Context
 * @property {import('./paths.mjs').ServiceDirs} dirs
 * @property {import('./urls.mjs').ServiceUrls} urls
 * @property {(message: string) => void} log
 * @property {number} timeoutMs       readiness budget for a service that we start
 * @property {boolean} allowInstall   may run apt-get install (as root) for a missing package
 */

/**
 * @typedef {object} EnsureOutcome
 * @property {import('./urls.mjs').ServiceName} service
 * @property {string} address
 * @property {'started' | 'already-running' | 'external'} outcome
 * @property {number} ms       time spent in `up` for this service
 * @property {string} detail   e.g. "pid 1234, Kafka 3.9.1"
 */

/**
 * @typedef {object} Started   what a start function hands back
 * @property {() => boolean} isAlive
 * @property {string} [logFile]
 * @property {() => Promise<string>} [afterReady]  runs once it answers; returns a detail
 * @property {string} detail
 */

/**
 * @typedef {object} ManagedSpec
 * @property {import('./urls.mjs').ServiceName} service
 * @property {string} id              pid file name
 * @property {string} address
 * @property {() => Promise<unknown>} probe
 * @property {import('./urls.mjs').HostPort[]} ports  must be free before we start
 * @property {() => Promise<Started>} start
 */

/**
 * @param {Context} ctx
 * @param {ManagedSpec} spec
 * @returns {Promise<EnsureOutcome>}
 */
export async function ensureManaged(ctx, spec) {
  const began = Date.now();
  /** @param {EnsureOutcome['outcome']} outcome @param {string} detail @returns {EnsureOutcome} */
  const done = (outcome, detail) => ({
    service: spec.service,
    address: spec.address,
    outcome,
    ms: Date.now() - began,
    detail,
  });

  if (isExternal(spec.service)) {
    const variable = ENV_BY_SERVICE[spec.service];
    await waitUntilReady({
      service: spec.service,
      address: spec.address,
      probe: spec.probe,
      timeoutMs: Math.min(ctx.timeoutMs, 30_000),
      hint: `${variable} points there, so nothing is started here: start that ${spec.service} or unset ${variable}`,
    });
    return done('external', `${variable} is set`);
  }

  const record = readPidFile(ctx.dirs.run, spec.id);
  if (record && isRunning(record)) {
    // Ours, possibly still starting (another process may have just started it).
    await waitUntilReady({
      service: spec.service,
      address: spec.address,
      probe: spec.probe,
      timeoutMs: ctx.timeoutMs,
      isAlive: () => isRunning(record),
      ...(record.logFile ? { logFile: record.logFile } : {}),
    });
    return done(
      'already-running',
      `pid ${record.pid}${record.version ? `, ${record.version}` : ''}`,
    );
  }
  if (record) removePidFile(ctx.dirs.run, spec.id);

  if (await answers(spec.probe)) return done('already-running', 'not started by services.mjs');
  for (const { host, port } of spec.ports) {
    if (!(await isPortOpen(host, port))) continue;
    // Something listens: maybe the service itself, still starting. Give it a moment.
    try {
      await waitUntilReady({
        service: spec.service,
        address: spec.address,
        probe: spec.probe,
        timeoutMs: 15_000,
      });
      return done('already-running', 'not started by services.mjs');
    } catch (error) {
      throw new ServiceError(
        spec.service,
        `port ${host}:${port} is in use, but not by a ${spec.service} that answers`,
        {
          hint: `stop whatever listens on ${port} (see \`ss -ltnp | grep ${port}\`), or point ${ENV_BY_SERVICE[spec.service]} at a running ${spec.service}`,
          cause: error,
        },
      );
    }
  }

  const started = await spec.start();
  await waitUntilReady({
    service: spec.service,
    address: spec.address,
    probe: spec.probe,
    timeoutMs: ctx.timeoutMs,
    isAlive: started.isAlive,
    ...(started.logFile ? { logFile: started.logFile } : {}),
  });
  const detail = started.afterReady ? await started.afterReady() : started.detail;
  return done('started', detail);
}

/**
 * @param {() => Promise<unknown>} probe
 */
export async function answers(probe) {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}

/**
 * @typedef {object} StopOutcome
 * @property {string} id
 * @property {'stopped' | 'killed' | 'not-running'} outcome
 * @property {number} [pid]
 */

/**
 * Stops the process of a pid file (if any). Never touches anything without one.
 * @param {Context} ctx
 * @param {string} id
 * @param {number} [graceMs]
 * @param {NodeJS.Signals} [signal]  the one that shuts the service down cleanly (default SIGTERM)
 * @returns {Promise<StopOutcome | null>} null when there was no pid file
 */
export async function stopManaged(ctx, id, graceMs, signal) {
  const record = readPidFile(ctx.dirs.run, id);
  if (!record) return null;
  const outcome = await stopRecorded(ctx.dirs.run, record, graceMs, signal);
  return { id, outcome, pid: record.pid };
}
