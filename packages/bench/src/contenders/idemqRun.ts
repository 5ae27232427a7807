import type { Idempotency } from '@idemq/core';
import type { BenchMessage } from '../workload.js';
import type { ContenderSetup, Outcome } from './types.js';

/**
 * One message through `run()`, as every idemq contender handles it whatever its store: the
 * setup's handler under the claim, and the outcome the bench counts (anything else is a bug).
 */
export function idemqHandle(
  idem: Idempotency,
  setup: ContenderSetup,
): (message: BenchMessage) => Promise<Outcome> {
  const noop = () => setup.handler();
  return async (message) => {
    const outcome = await idem.run(message.requestId, noop, { payload: message.body });
    switch (outcome.status) {
      case 'processed':
      case 'duplicate':
      case 'in-progress':
        return outcome.status;
      default:
        throw new Error(`idemq answered ${outcome.status} for ${message.requestId}`);
    }
  };
}
