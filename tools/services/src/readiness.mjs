// @ts-check
// Waiting for a service to answer a real request, failing fast when its process dies and with
// the log tail when it does not come up in time.
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, ServiceError } from './errors.mjs';
import { formatBlock, tailFile } from './logTail.mjs';

/**
 * @typedef {object} WaitOptions
 * @property {string} service
 * @property {string} address
 * @property {() => Promise<unknown>} probe   resolves once the service answers
 * @property {number} timeoutMs
 * @property {number} [intervalMs]
 * @property {string} [logFile]                its tail goes into the error
 * @property {() => boolean} [isAlive]         false = the process died: stop waiting
 * @property {string} [hint]
 */

/**
 * @param {WaitOptions} options
 * @returns {Promise<number>} milliseconds waited
 */
export async function waitUntilReady(options) {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let lastError = 'no attempt yet';
  for (;;) {
    try {
      await options.probe();
      return Date.now() - started;
    } catch (error) {
      lastError = errorMessage(error);
      // e.g. a missing password: it answers, and will refuse the same way until someone acts.
      if (isFinal(error)) {
        throw failure(
          options,
          `${options.service} at ${options.address} refused the probe`,
          lastError,
        );
      }
    }
    if (options.isAlive && !options.isAlive()) {
      throw failure(options, `${options.service} exited during start-up`, lastError);
    }
    if (Date.now() >= deadline) {
      const seconds = Math.round(options.timeoutMs / 1000);
      throw failure(
        options,
        `${options.service} did not answer at ${options.address} within ${seconds} s`,
        lastError,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}

/**
 * True for a probe error that says waiting cannot help (`retriable: false`).
 * @param {unknown} error
 */
function isFinal(error) {
  return (
    typeof error === 'object' && error !== null && 'retriable' in error && error.retriable === false
  );
}

/**
 * @param {WaitOptions} options
 * @param {string} what
 * @param {string} lastError
 */
function failure(options, what, lastError) {
  const log = options.logFile
    ? `\n${formatBlock(`  last lines of ${options.logFile}:`, tailFile(options.logFile))}`
    : '';
  return new ServiceError(options.service, `${what} (last probe: ${lastError})${log}`, {
    ...(options.hint ? { hint: options.hint } : {}),
  });
}
